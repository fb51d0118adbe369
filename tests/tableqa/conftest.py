"""Fixtures for the table-QA tests: DataBench tables from the shared data folder."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.shared import shared_path


@pytest.fixture(scope="session")
def databench_dir(shared_data):
    shared_path("data", "databench", "qa.jsonl")
    return shared_data / "databench"


@pytest.fixture(scope="session")
def ibm_hr(databench_dir) -> pd.DataFrame:
    return pd.read_parquet(databench_dir / "tables" / "066_IBM_HR" / "all.parquet")
