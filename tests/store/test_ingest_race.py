"""Concurrent ingests into one DuckDB store (issue 28, item 5): one at a time under a file
lock, the others refused with a clear message, the store readable throughout and left with
exactly one complete generation. Before the lock, 1-3 of 4 rounds of 6 left ``current``
pointing at a deleted generation and half the ingests died with raw tracebacks."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from foretab.core.months import Month
from foretab.errors import StoreError
from foretab.store import open_future, open_history
from foretab.store.ingest import ingest_frame
from foretab.store.location import StoreLocation
from foretab.store.swap import ingest_lock, store_dir

SRC = str(Path(__file__).resolve().parents[2] / "src")
TESTS = str(Path(__file__).resolve().parent)

_INGEST = """
import sys, time
sys.path.insert(0, {tests!r})
from test_store_swap import frame
from foretab.errors import StoreError
from foretab.core.months import Month
from foretab.store.ingest import ingest_frame

start = float(sys.argv[2])
data = frame()
while time.time() < start:
    time.sleep(0.001)
try:
    ingest_frame(data, sys.argv[1], Month(2021, int(sys.argv[3])))
except StoreError as error:
    print("REFUSED:", error.message)
    sys.exit(3)
print("DONE")
"""


def _round(db: str, processes: int = 6) -> list[subprocess.CompletedProcess[str]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])}
    start = time.time() + 3.0  # every process has imported foretab by then
    code = _INGEST.format(tests=TESTS)
    running = [
        subprocess.Popen(
            [sys.executable, "-c", code, db, str(start), str(6 + i)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(processes)
    ]
    done = []
    for process in running:
        out, err = process.communicate(timeout=120)
        done.append(subprocess.CompletedProcess(process.args, process.returncode, out, err))
    return done


@pytest.fixture(params=["duckdb", pytest.param("postgresql", marks=pytest.mark.postgres)])
def race_db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "duckdb":
        return str(tmp_path / "corpus.duckdb")
    server = request.getfixturevalue("pg_server")
    return server.url(server.fresh_dbname("race"))


@pytest.mark.slow  # 12 ingest processes; the lock itself is tested fast below
def test_concurrent_ingests_are_serialised(race_db: str, tmp_path: Path) -> None:
    db = race_db
    ingest_frame(_frame(), db, Month(2021, 6))
    failures: list[str] = []
    stop = threading.Event()

    def read_all_the_time() -> None:
        while not stop.is_set():
            try:
                with open_history(db) as history:
                    assert history.catalog()
            except Exception as error:
                failures.append(repr(error))

    reader = threading.Thread(target=read_all_the_time)
    reader.start()
    try:
        results = [r for _ in range(2) for r in _round(db)]
    finally:
        stop.set()
        reader.join()
    for result in results:
        assert result.returncode in (0, 3), result.stderr[-2000:]
        assert "Traceback" not in result.stderr, result.stderr[-2000:]
        if result.returncode == 3:
            assert re.search(r"another .*ingest.* into .* is running", result.stdout), result.stdout
    assert any(r.returncode == 0 for r in results)
    assert failures == [], failures[:3]
    with open_history(db) as history, open_future(db) as future:
        assert history.meta["generation"] == future.meta["generation"]
    if db.startswith("postgresql"):
        return
    folder = tmp_path / ".corpus.duckdb.store"
    assert sorted(p.name for p in folder.iterdir() if p.name != "current") == [
        os.readlink(folder / "current")
    ]


def test_an_ingest_while_the_lock_is_held_is_refused(tmp_path: Path) -> None:
    db = str(tmp_path / "corpus.duckdb")
    ingest_frame(_frame(), db, Month(2021, 6))
    location = StoreLocation.parse(db)
    with ingest_lock(location):
        try:
            ingest_frame(_frame(), db, Month(2021, 12))
        except StoreError as error:
            assert "another ingest into this store is running" in error.message
        else:
            raise AssertionError("the second ingest was not refused")
        with open_history(db) as history:  # readable while an ingest holds the lock
            assert history.reference_month == Month(2021, 6)
    assert store_dir(location).is_dir()
    ingest_frame(_frame(), db, Month(2021, 12))  # released: the next ingest runs


def _frame():
    sys.path.insert(0, TESTS)
    from test_store_swap import frame

    return frame()
