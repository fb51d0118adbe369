"""The real corpus's project list as ``EntityEntry`` rows and one EntityIndex over it."""

from __future__ import annotations

import pandas as pd
import pytest

from foretab.core.months import Month
from foretab.parse.entities import EntityIndex
from foretab.store.catalog import EntityEntry
from tests.shared import SHARED, shared_path

CORPUS = SHARED / "data" / "realestate" / "project_prices.csv.gz"


@pytest.fixture(scope="session")
def corpus_entries() -> list[EntityEntry]:
    shared_path("data", "realestate", "project_prices.csv.gz")
    frame = pd.read_csv(CORPUS, usecols=["city", "district", "project", "month", "project_zh",
                                         "city_zh", "district_zh"])  # fmt: skip
    grouped = frame.groupby(["city", "district", "project"], sort=True).agg(
        first_month=("month", "min"),
        last_month=("month", "max"),
        n=("month", "count"),
        project_zh=("project_zh", "first"),
        city_zh=("city_zh", "first"),
        district_zh=("district_zh", "first"),
    )
    return [
        EntityEntry(
            city,
            district,
            project,
            Month.parse(row.first_month),
            Month.parse(row.last_month),
            int(row.n),
            (row.project_zh,),
            (row.city_zh,),
            (row.district_zh,),
        )
        for (city, district, project), row in grouped.iterrows()
    ]


@pytest.fixture(scope="session")
def corpus_index(corpus_entries: list[EntityEntry]) -> EntityIndex:
    return EntityIndex(corpus_entries)
