"""``foretab ask`` collects no garbage while it opens the store (cold start, ``cli/heap.py``).

What opening built is frozen before the question is answered; collection resumes for the
questions; the guard's worker does the same for a description and a session's open.
"""

from __future__ import annotations

import atexit
import gc
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from foretab.cli import (
    ask,  # noqa: F401  (register the command)
    heap,
)
from foretab.cli.main import app
from foretab.sql import worker
from foretab.sql.limits import DEFAULT_MEMORY_BYTES

GOOD = "What was the price of Bund Garden in Huangpu District, Shanghai in March 2021?"


@pytest.fixture
def clean_heap() -> Iterator[None]:
    """Whatever a test paused or froze is undone."""
    yield
    atexit.unregister(gc.freeze)
    heap._paused = False
    gc.unfreeze()
    gc.enable()


def test_collection_waits_for_the_open_then_resumes(clean_heap: None) -> None:
    heap.pause_while_opening()
    assert not gc.isenabled()
    gc.collect()  # an explicit collection still works; only the automatic ones wait
    frozen = gc.get_freeze_count()
    heap.resume_after_opening()
    assert gc.isenabled()
    assert gc.get_freeze_count() > frozen


def test_nothing_is_frozen_unless_the_process_paused(clean_heap: None) -> None:
    heap.resume_after_opening()
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_ask_resumes_collection_once_the_engine_is_open(mini_duckdb: str, clean_heap: None) -> None:
    heap.pause_while_opening()
    result = CliRunner().invoke(app, ["ask", GOOD, "--db", mini_duckdb, "--json"])
    assert result.exit_code == 0, result.output
    assert gc.isenabled() and gc.get_freeze_count() > 0


def test_the_worker_freezes_what_a_description_and_an_open_built(
    mini_duckdb: str, clean_heap: None
) -> None:
    watchdog = worker._Watchdog()
    request = worker.DescribeRequest(mini_duckdb, DEFAULT_MEMORY_BYTES)
    session, description = worker._handle(None, request, watchdog)
    assert isinstance(description, worker.StoreDescription)
    assert gc.isenabled() and gc.get_freeze_count() > 0
    gc.unfreeze()
    opening = worker.OpenRequest("duckdb", mini_duckdb, 5.0, None, DEFAULT_MEMORY_BYTES)
    session, opened = worker._handle(session, opening, watchdog)
    try:
        assert isinstance(opened, worker.Opened)
        assert gc.isenabled() and gc.get_freeze_count() > 0
    finally:
        assert session is not None
        session.close()
        while worker._preopened:
            worker._preopened.pop().close()
