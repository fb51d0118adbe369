"""Hard limits outside the query engine: deadlines, memory, result bytes, statement size.

Every guarded statement is parsed, checked and run in a worker process that is killed
at 1.5× its time limit and whose address space is capped; results are capped by bytes as
well as rows. These run on both backends.
"""

from __future__ import annotations

import os
import resource
import signal
import time

import pytest
from sql_stores import HISTORY_2021

from foretab.errors import GuardError, QueryError
from foretab.sql.guard import GuardedExecutor

T = HISTORY_2021
MIB = 2**20

# Work the engine cannot (or does not) interrupt: planning a 300-way join, parsing an
# IN list of ~100,000 characters, building strings of hundreds of megabytes.
PLANNER_BOMB = "SELECT count(*) FROM " + ", ".join(f"{T} a{i}" for i in range(300))
PARSE_BOMB = f"SELECT count(*) FROM {T} WHERE price IN ({', '.join(str(i) for i in range(14_000))})"
# 24**6 rows of ~67 bytes: ~12 GB of string, past any cap (PostgreSQL's own is 1 GB), so
# the outcome is a memory error or the deadline on every machine, however fast.
STRING_BOMB = (
    "SELECT length(string_agg(a.project_name || b.project_name || c.project_name, ',')) "
    f"FROM {T} a, {T} b, {T} c, {T} d, {T} e, {T} f"
)


def _after_is_usable(guard: GuardedExecutor) -> None:
    assert guard.execute(f"SELECT count(*) FROM {T}").rows == ((24,),)


@pytest.mark.slow_variant("postgresql", "planner")  # a second of CPU each; duckdb-parse stays
@pytest.mark.parametrize("statement", [PLANNER_BOMB, PARSE_BOMB], ids=["planner", "parse"])
def test_statement_stops_within_twice_its_limit(store, clean_cwd, statement: str) -> None:
    limit = 1.0
    with GuardedExecutor(store.db, timeout_s=limit) as guard:
        started = time.perf_counter()
        try:
            guard.execute(statement)
        except QueryError as error:
            assert "timed out after 1 s" in error.message
        waited = time.perf_counter() - started
        _after_is_usable(guard)
    assert waited < 2 * limit


@pytest.mark.slow_variant("postgresql")
def test_memory_bomb_is_the_normal_error_and_this_process_stays_small(store, clean_cwd) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    with GuardedExecutor(store.db, timeout_s=2.0, memory_bytes=512 * MIB) as guard:
        started = time.perf_counter()
        with pytest.raises(QueryError) as caught:
            guard.execute(STRING_BOMB)
        assert time.perf_counter() - started < 4.0
        _after_is_usable(guard)
    message = caught.value.message
    assert "memory" in message or "timed out" in message
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    assert grown < 200 * MIB


@pytest.mark.slow_variant("postgresql")
def test_huge_values_under_a_low_cap_are_the_normal_error(store, clean_cwd) -> None:
    # 576 values of 1 MB with a 400 MiB result cap under a 300 MiB address-space cap.
    sql = f"SELECT lpad(a.project_name, 1000000, 'x') AS v FROM {T} a, {T} b"
    with GuardedExecutor(
        store.db, timeout_s=10.0, memory_bytes=300 * MIB, max_result_bytes=400 * MIB
    ) as guard:
        with pytest.raises(QueryError) as caught:
            guard.execute(sql)
        _after_is_usable(guard)
    assert "memory" in caught.value.message


def test_result_bytes_are_capped_and_marked(store, clean_cwd) -> None:
    sql = f"SELECT lpad(a.project_name, 100000, 'x') AS v FROM {T} a, {T} b"
    with GuardedExecutor(store.db, max_result_bytes=4 * MIB) as guard:
        result = guard.execute(sql)
    assert result.truncated
    assert result.truncated_by == "bytes"
    assert 0 < len(result.rows) < 576
    assert sum(len(r[0]) for r in result.rows) <= 4 * MIB


def test_row_cap_still_says_rows(store, clean_cwd) -> None:
    with GuardedExecutor(store.db, max_rows=5) as guard:
        result = guard.execute(f"SELECT price FROM {T}")
    assert (result.truncated, result.truncated_by, len(result.rows)) == (True, "rows", 5)


def test_statement_length_is_capped(store, clean_cwd) -> None:
    sql = f"SELECT count(*) FROM {T} WHERE price IN ({', '.join(['1'] * 60_000)})"
    with GuardedExecutor(store.db) as guard:
        started = time.perf_counter()
        with pytest.raises(GuardError) as caught:
            guard.execute(sql)
        assert time.perf_counter() - started < 0.5
    assert caught.value.rule == "query-size"
    assert "100,000" in caught.value.message


@pytest.mark.slow_variant("postgresql")
def test_killed_worker_is_replaced(store, clean_cwd) -> None:
    # A worker that cannot answer at all (stopped, as if stuck in C code the engine cannot
    # interrupt): killed at the deadline, and the next statement gets a fresh one. (A
    # planner bomb was flaky here: on a fast or idle machine the engine's own interrupt
    # sometimes lands in time and the worker rightly survives.)
    with GuardedExecutor(store.db, timeout_s=0.5) as guard:
        first = guard._worker
        assert first is not None
        os.kill(first.process.pid, signal.SIGSTOP)
        started = time.perf_counter()
        with pytest.raises(QueryError, match="timed out"):
            guard.execute(f"SELECT count(*) FROM {T}")
        assert time.perf_counter() - started < 2 * 0.5 + 0.5
        _after_is_usable(guard)
        assert guard._worker is not first
        assert first.process.poll() is not None
