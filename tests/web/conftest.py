"""A small store (the mini fixture corpus) and the app over it, in-process."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from foretab.engine import Engine
from foretab.web import AppSettings, EnginePool, create_app
from foretab.web.gate import LOOPBACK_HOSTS
from foretab.web.pool import EngineFactory
from tests.web.banded import BandedPersistence

TEST_HOSTS = (*LOOPBACK_HOSTS, "testserver")


def banded_factory(db: str) -> EngineFactory:
    """Engines whose 'model' future source gives intervals (no training needed)."""

    def build(mode: str, warm: Engine | None) -> Engine:
        source = BandedPersistence() if mode == "model" else None
        return Engine.open(db if warm is None else warm.context, future=mode, future_source=source)  # type: ignore[arg-type]

    return build


@pytest.fixture
def pool(mini_duckdb: str) -> Iterator[EnginePool]:
    pool = EnginePool(banded_factory(mini_duckdb), size=3, default="oracle")
    yield pool
    pool.close()


def client_for(pool: EnginePool, **settings: object) -> TestClient:
    # The fixtures' pools answer from the oracle (exact numbers): an evaluation server.
    options = {"allowed_hosts": TEST_HOSTS, "allow_oracle": True, **settings}
    return TestClient(create_app(pool, AppSettings(**options)))  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def shared_pool(mini_duckdb: str) -> Iterator[EnginePool]:
    """The pool behind ``client``, kept for a module: requests must not change an engine, so
    tests that only send requests share one (building 3 engines per test cost ~3 s each).
    Tests about the pool itself take the fresh ``pool``."""
    pool = EnginePool(banded_factory(mini_duckdb), size=3, default="oracle")
    yield pool
    pool.close()


@pytest.fixture
def client(shared_pool: EnginePool) -> Iterator[TestClient]:
    with client_for(shared_pool) as c:
        yield c
