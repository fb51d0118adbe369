"""``foretab serve``'s load limits and its worker processes, over real HTTP on loopback.

* a bounded queue: past ``engines + queue`` requests in flight the answer is a 503 with
  Retry-After at once, not a longer wait for everyone;
* a per-request timeout (waiting included): a 504, and the engine is not lost;
* ``--workers N``: N processes on one port, each with its own warm engines and foretab's
  h11 protocol; each picks up a new ingest; a worker that dies is started again; SIGTERM
  stops them all.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pandas as pd
import pytest

from foretab.core.months import Month
from foretab.engine import Engine
from foretab.store.ingest import ingest_path
from foretab.web import AppSettings, EnginePool, create_app
from foretab.web.pool import EngineFactory, engine_factory
from tests.conftest import MINI_CSV
from tests.processes import running
from tests.web.conftest import TEST_HOSTS
from tests.web.server import serve_process, serving

QUESTION = "What was the price of Bund Garden in Huangpu, Shanghai in March 2021?"
#: How long to wait for the workers to answer, take a new ingest or come back after a kill:
#: a detector of what never happens, not a speed check (see ``STARTUP_TIMEOUT_S``).
WAIT_S = 120.0


def slow_factory(db: str, seconds: float) -> EngineFactory:
    """Rules engines whose every answer takes at least ``seconds``."""
    plain = engine_factory(db)

    def build(mode: str, warm: Engine | None) -> Engine:
        engine = plain(mode, warm)  # type: ignore[arg-type]
        ask = engine.ask

        def slow_ask(question: str):  # type: ignore[no-untyped-def]
            time.sleep(seconds)
            return ask(question)

        engine.ask = slow_ask  # type: ignore[method-assign]
        return engine

    return build


@pytest.fixture
def slow_server(
    mini_duckdb: str, request: pytest.FixtureRequest
) -> Iterator[tuple[str, EnginePool]]:
    size, queue, timeout_s, seconds = request.param
    pool = EnginePool(
        slow_factory(mini_duckdb, seconds),
        size=size,
        default="none",
        queue=queue,
        request_timeout_s=timeout_s,
    )
    try:
        app = create_app(pool, AppSettings(allowed_hosts=TEST_HOSTS))
        with serving(app, guarded=True) as url:
            yield url, pool
    finally:
        pool.close()


def _ask_all(url: str, n: int) -> list[httpx.Response]:
    """``n`` questions sent at once, one connection each."""
    responses: list[httpx.Response] = []
    lock = threading.Lock()

    def one() -> None:
        r = httpx.post(url + "/api/ask", json={"question": QUESTION}, timeout=30)
        with lock:
            responses.append(r)

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return responses


@pytest.mark.slow
@pytest.mark.parametrize("slow_server", [(1, 2, 30.0, 1.0)], indirect=True)
def test_a_full_queue_answers_503_with_retry_after(slow_server: tuple[str, EnginePool]) -> None:
    url, pool = slow_server
    started = time.monotonic()
    responses = _ask_all(url, 6)  # 1 running + 2 waiting; 3 refused
    statuses = Counter(r.status_code for r in responses)
    assert statuses == {200: 3, 503: 3}, statuses
    busy = [r for r in responses if r.status_code == 503]
    for r in busy:
        assert r.headers["retry-after"] == "1"
        assert r.json()["error"]["type"] == "ServerBusyError"
        assert "busy" in r.json()["error"]["message"]
    # The refusals came at once; the three answers one after the other (~3 s).
    assert time.monotonic() - started < 10
    assert pool.in_flight == 0
    # Room again: the next request is answered.
    assert httpx.post(url + "/api/ask", json={"question": QUESTION}).status_code == 200


@pytest.mark.slow
@pytest.mark.parametrize("slow_server", [(1, 8, 0.5, 1.2)], indirect=True)
def test_a_request_past_the_timeout_gets_504_and_keeps_its_engine(
    slow_server: tuple[str, EnginePool],
) -> None:
    url, pool = slow_server
    started = time.monotonic()
    r = httpx.post(url + "/api/ask", json={"question": QUESTION}, timeout=30)
    assert r.status_code == 504
    assert r.json()["error"]["type"] == "RequestTimeoutError"
    assert "0.5 s" in r.json()["error"]["message"]
    assert time.monotonic() - started < 1.1  # answered at the deadline, not after the work
    assert pool.in_flight == 1  # its work still holds the engine ...
    deadline = time.monotonic() + 10
    while pool.in_flight and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pool.in_flight == 0  # ... until it ends
    assert pool.engines == 1  # the engine went back to the pool, not lost
    # Health answers from memory, whatever the engines are doing.
    assert httpx.get(url + "/api/health").json()["status"] == "ok"


@pytest.mark.slow_variant("2")
@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_worker_that_cannot_open_the_store_fails_the_start(tmp_path: Path, workers: str) -> None:
    from typer.testing import CliRunner

    from foretab.cli.main import app, register_commands

    register_commands()
    result = CliRunner().invoke(
        app,
        ["serve", "--db", str(tmp_path / "none.duckdb"), "--workers", workers],
        env={"FORETAB_TOKEN": ""},
    )
    assert result.exit_code == 2 and "foretab ingest" in result.output


def ingest_scaled(db: str, folder: Path, factor: float, reference: Month) -> None:
    frame = pd.read_csv(MINI_CSV)
    frame["avg_price"] = (frame["avg_price"] * factor).round(2)
    path = folder / f"mini_x{factor}.csv"
    frame.to_csv(path, index=False)
    ingest_path(path, db, reference)


def _workers_of(pid: int) -> list[int]:
    """The worker processes of the supervisor ``pid`` (multiprocessing's spawned children)."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        for child in task.read_text().split():
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
            if b"spawn_main" in cmdline:
                found.append(int(child))
    return found


def _health_by_worker(
    url: str, want: int, timeout_s: float = WAIT_S
) -> dict[int, dict[str, object]]:
    """/api/health as each of ``want`` workers answers it (new connection each time)."""
    seen: dict[int, dict[str, object]] = {}
    deadline = time.monotonic() + timeout_s
    while len(seen) < want and time.monotonic() < deadline:
        with httpx.Client() as client:
            doc = client.get(url + "/api/health").json()
        seen[int(doc["worker"])] = doc
    return seen


def _price(url: str) -> float:
    r = httpx.post(url + "/api/ask", json={"question": QUESTION}, timeout=30)
    assert r.status_code == 200, r.text
    return float(r.json()["answer"][0][0])


@pytest.mark.slow
def test_workers_share_one_port_and_each_picks_up_a_new_ingest(tmp_path: Path) -> None:
    db = str(tmp_path / "store.duckdb")
    ingest_scaled(db, tmp_path, 1.0, Month(2021, 12))
    log = tmp_path / "serve.log"
    args = ("--workers", "2", "--engines", "2", "--future", "none")
    with serve_process(db, *args, log_path=log) as (url, process):
        before = _health_by_worker(url, 2)
        assert "workers = 2" in log.read_text()  # announced once both were warm
        workers = _workers_of(process.pid)
        assert len(workers) == 2
        assert set(before) == {0, 1}, "both workers answer on the one port"
        assert len({d["generation"] for d in before.values()}) == 1
        first = _price(url)
        # The h11 protocol with its per-client cap runs in every worker: 32 each.
        held = [httpx.Client() for _ in range(2)]
        try:
            assert all(c.get(url + "/api/health").status_code == 200 for c in held)
        finally:
            for c in held:
                c.close()

        ingest_scaled(db, tmp_path, 2.0, Month(2021, 11))
        deadline = time.monotonic() + WAIT_S
        while True:
            after = _health_by_worker(url, 2)
            generations = {d["generation"] for d in after.values()}
            if set(after) == {0, 1} and before[0]["generation"] not in generations:
                break
            assert time.monotonic() < deadline, f"a worker kept the old ingest: {after}"
            time.sleep(0.3)
        assert len(generations) == 1
        assert {d["reference_month"] for d in after.values()} == {"2021-11"}
        for _ in range(6):  # whichever worker answers, the new prices
            assert _price(url) == pytest.approx(2 * first, abs=0.02)

        # A worker that dies is started again, on the same port.
        os.kill(workers[0], signal.SIGKILL)
        deadline = time.monotonic() + WAIT_S
        while len(_workers_of(process.pid)) < 2 or workers[0] in _workers_of(process.pid):
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        assert set(_health_by_worker(url, 2)) == {0, 1}
        workers = _workers_of(process.pid)

        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0
    for pid in workers:
        assert not running(pid)
    # (The SIGKILLed worker's semaphore is reported by multiprocessing's resource tracker.)
    assert log.read_text().count("leaked semaphore") <= 1


@pytest.mark.slow
def test_the_per_client_connection_cap_is_an_option(mini_duckdb: str, tmp_path: Path) -> None:
    args = ("--workers", "1", "--engines", "1", "--future", "none", "--client-connections", "2")
    with serve_process(mini_duckdb, *args, log_path=tmp_path / "serve.log") as (url, _):
        held = [httpx.Client(base_url=url) for _ in range(2)]
        try:
            assert all(c.get("/api/health").status_code == 200 for c in held)  # kept alive
            with httpx.Client(base_url=url) as third:
                r = third.get("/api/health")
            assert r.status_code == 503 and r.headers["retry-after"] == "1"
            assert r.json()["error"]["type"] == "TooManyConnectionsError"
        finally:
            for c in held:
                c.close()
