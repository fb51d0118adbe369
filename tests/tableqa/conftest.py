"""Fixtures for the table-QA tests: DataBench tables from the shared data folder."""

from __future__ import annotations

import pandas as pd
import pytest


@pytest.fixture(scope="session")
def databench_dir(shared_data):
    folder = shared_data / "databench"
    if not (folder / "qa.jsonl").is_file():
        pytest.skip(f"DataBench not found at {folder}")
    return folder


@pytest.fixture(scope="session")
def ibm_hr(databench_dir) -> pd.DataFrame:
    return pd.read_parquet(databench_dir / "tables" / "066_IBM_HR" / "all.parquet")
