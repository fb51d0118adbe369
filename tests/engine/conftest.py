"""A store of the shared real corpus (reference month 2021-12), built once per session."""

from __future__ import annotations

import pandas as pd
import pytest

from foretab.core.months import Month
from tests.shared import SHARED, shared_path

SHARED_CSV = SHARED / "data" / "realestate" / "project_prices.csv.gz"


@pytest.fixture(scope="session")
def corpus_frame() -> pd.DataFrame:
    return pd.read_csv(shared_path("data", "realestate", "project_prices.csv.gz"))


@pytest.fixture(scope="session")
def corpus_db(tmp_path_factory: pytest.TempPathFactory, corpus_frame: pd.DataFrame) -> str:
    from foretab.store.ingest import ingest_path

    db = str(tmp_path_factory.mktemp("corpus") / "corpus.duckdb")
    ingest_path(SHARED_CSV, db, Month(2021, 12))
    return db
