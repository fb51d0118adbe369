"""A running server picks up a new ingest of its store between requests, on both backends.

Before, an engine pool kept the generation it opened: on PostgreSQL the ingest after next
dropped that generation under it (errors until a restart), on DuckDB a replaced guard
worker was refused with "reopen".
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pandas as pd
import pytest

from foretab.core.months import Month
from foretab.store.ingest import ingest_path
from foretab.web import EnginePool
from foretab.web.pool import engine_factory
from tests.conftest import MINI_CSV
from tests.web.conftest import client_for

QUESTION = "What was the price of Bund Garden in Huangpu, Shanghai in March 2021?"


@pytest.fixture
def db(empty_store_db: str) -> str:
    return empty_store_db  # on each backend (tests/conftest.py)


def ingest_scaled(db: str, folder: Path, factor: float, reference: Month) -> None:
    """The mini corpus with every price times ``factor``, ingested at ``reference``."""
    frame = pd.read_csv(MINI_CSV)
    frame["avg_price"] = (frame["avg_price"] * factor).round(2)
    path = folder / f"mini_x{factor}.csv"
    frame.to_csv(path, index=False)
    ingest_path(path, db, reference)


def price(pool: EnginePool) -> float:
    answer = anyio.run(pool.ask, "rules", None, QUESTION, lambda a: a)
    return float(answer.answer[0][0])


@pytest.mark.slow_variant("postgresql")
def test_a_new_ingest_is_served_without_a_restart(db: str, tmp_path: Path) -> None:
    ingest_scaled(db, tmp_path, 1.0, Month(2021, 12))
    pool = EnginePool(engine_factory(db), size=2, default="none", reload_check_s=0.0)
    try:
        first, generation = price(pool), pool.generation
        # Two more ingests: on PostgreSQL the second one drops the generation opened first.
        ingest_scaled(db, tmp_path, 2.0, Month(2021, 12))
        assert price(pool) == pytest.approx(2 * first, abs=0.02)
        ingest_scaled(db, tmp_path, 3.0, Month(2021, 11))
        assert price(pool) == pytest.approx(3 * first, abs=0.02)
        assert pool.generation not in (None, generation)
        assert pool.reference == Month(2021, 11)
        assert pool.engines == 1  # the old generations' engines were closed
        with client_for(pool) as client:
            health = client.get("/api/health").json()
        assert health["reference_month"] == "2021-11"
    finally:
        pool.close()


def test_the_check_is_rate_limited_and_an_unchanged_store_keeps_its_engines(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "served.duckdb")
    ingest_scaled(db, tmp_path, 1.0, Month(2021, 12))
    pool = EnginePool(engine_factory(db), size=2, default="none", reload_check_s=3600.0)
    try:
        first = price(pool)
        ingest_scaled(db, tmp_path, 2.0, Month(2021, 12))
        # Within the check interval the open generation keeps serving, unchanged.
        assert price(pool) == first
        assert pool.refresh() is False
        pool.reload_check_s = 0.0
        assert pool.refresh() is True
        assert pool.refresh() is False  # same generation: nothing rebuilt
        assert price(pool) == pytest.approx(2 * first, abs=0.02)
    finally:
        pool.close()


def test_an_unreadable_store_keeps_the_open_generation_serving(tmp_path: Path) -> None:
    db = str(tmp_path / "served.duckdb")
    ingest_scaled(db, tmp_path, 1.0, Month(2021, 12))
    pool = EnginePool(engine_factory(db), size=2, default="none", reload_check_s=0.0)
    try:
        first = price(pool)
        moved = tmp_path / "moved.duckdb"
        Path(db).rename(moved)  # the store's pointer is gone for a moment
        assert pool.refresh() is False
        assert price(pool) == first
        moved.rename(db)
    finally:
        pool.close()
