"""The guard's worker pool: a worker is killed and waited for before its ``Popen`` goes.

An executor dropped in a reference cycle (every engine's was, until its session held it
weakly) is freed by the cyclic collector, which finalizes what the cycle holds in the
order of its lists. A worker reused from the idle pool is older than the executor that
took it; its ``Popen.__del__`` used to run first and warn that the subprocess was still
running (one fast-suite run in eight failed on it).
"""

from __future__ import annotations

import gc
import sys

import pytest
from tests.processes import needs_proc, running

from foretab.sql.guard import GuardedExecutor


class _Cycle:
    """Something that refers to itself: only the cyclic collector frees it."""

    def __init__(self, guard: GuardedExecutor) -> None:
        self.guard = guard
        self.me = self


@needs_proc
def test_an_executor_freed_in_a_cycle_kills_its_reused_worker_quietly(
    mini_duckdb: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    finalizer_errors: list[str] = []
    monkeypatch.setattr(
        sys, "unraisablehook", lambda u: finalizer_errors.append(f"{u.exc_value} in {u.object!r}")
    )
    with GuardedExecutor(mini_duckdb) as first:  # on close its worker goes back to the pool
        first.execute("SELECT 1")
    gc.collect()  # the pool's workers and their Popens now sit in the oldest generation
    cycle = _Cycle(GuardedExecutor(mini_duckdb))  # takes a worker from the pool
    assert cycle.guard.execute("SELECT 2").rows == ((2,),)
    worker = cycle.guard._worker
    assert worker is not None
    pid = worker.process.pid
    del cycle, worker
    gc.collect()
    assert finalizer_errors == []
    assert not running(pid), "the dropped executor's worker is still running"
