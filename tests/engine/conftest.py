"""A store of the shared real corpus (reference month 2021-12), built once per session."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from foretab.core.months import Month

SHARED_CSV = (
    Path(__file__).resolve().parents[2].parent
    / "shared"
    / "data"
    / "realestate"
    / "project_prices.csv.gz"
)


@pytest.fixture(scope="session")
def corpus_frame() -> pd.DataFrame:
    if not SHARED_CSV.exists():
        pytest.skip(
            f"shared corpus not found at {SHARED_CSV} (CI has ../shared beside the checkout)"
        )
    return pd.read_csv(SHARED_CSV)


@pytest.fixture(scope="session")
def corpus_db(tmp_path_factory: pytest.TempPathFactory, corpus_frame: pd.DataFrame) -> str:
    from foretab.store.ingest import ingest_path

    db = str(tmp_path_factory.mktemp("corpus") / "corpus.duckdb")
    ingest_path(SHARED_CSV, db, Month(2021, 12))
    return db
