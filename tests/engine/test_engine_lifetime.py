"""An engine dropped without ``close`` is freed at once, its guard worker with it.

The session's ``forecast()`` provider used to hold the engine's own method, which made
every engine a reference cycle: a dropped engine kept its guard worker process, store
connections and indexes until the cyclic collector's next full pass.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from foretab.engine import Engine
from foretab.errors import QueryError
from tests.processes import needs_proc, running

QUESTION = "What was the price of Bund Garden in Huangpu District, Shanghai in March 2021?"


@pytest.fixture
def no_cyclic_collector() -> Iterator[None]:
    """Only reference counting frees objects while the test runs."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@needs_proc
def test_a_dropped_engine_is_freed_with_its_guard_worker(
    mini_duckdb: str, no_cyclic_collector: None
) -> None:
    engine = Engine.open(mini_duckdb)
    assert engine.ask(QUESTION).answer is not None
    worker = engine.guard._worker
    assert worker is not None
    pid = worker.process.pid
    dropped = weakref.ref(engine)
    del engine, worker
    assert dropped() is None, "the engine outlived its last reference"
    assert not running(pid), "the dropped engine's guard worker is still running"


def test_a_guard_kept_without_its_engine_says_why_forecast_sql_fails(
    mini_duckdb: str, no_cyclic_collector: None
) -> None:
    engine = Engine.open(mini_duckdb)
    guard = engine.guard
    assert engine.ask(QUESTION).answer is not None
    del engine
    with pytest.raises(QueryError, match="engine is gone; keep the engine"):
        guard.execute(
            "SELECT * FROM forecast('project_price_table_huangpu_district_shanghai_2021')"
        )
    guard.close()
