"""The scale corpus (issue 27): K times the real corpus's shape, streamed city by city."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from foretab.demo.generate import COLUMNS, DemoError
from foretab.demo.scale import REAL_CITIES, REAL_PROJECTS, city_plan, write_scale_corpus


@pytest.mark.parametrize("k", [1, 3])
def test_the_plan_has_k_times_the_real_cities_districts_and_projects(k: int) -> None:
    plan = list(city_plan(k, seed=0))
    assert len(plan) == 8 * k
    assert sum(len(districts) for _, _, districts, _ in plan) == 102 * k
    assert sum(projects for *_, projects in plan) == REAL_PROJECTS * k
    # The real corpus's district counts per city, in its order, repeated K times.
    assert [len(d) for _, _, d, _ in plan] == [n for n, _ in REAL_CITIES] * k


def test_place_names_are_unique_and_the_plan_is_seeded() -> None:
    plan = list(city_plan(10, seed=0))
    cities = [city for city, *_ in plan]
    assert len(set(cities)) == len(cities)
    for _, _, districts, _ in plan:
        assert len(set(districts)) == len(districts)
    assert list(city_plan(10, seed=0)) == plan
    assert [c for c, *_ in city_plan(10, seed=1)] != cities


@pytest.mark.parametrize("k", [0, -1, 1001])
def test_a_scale_outside_one_to_a_thousand_is_refused(k: int, tmp_path: Path) -> None:
    with pytest.raises(DemoError, match="--scale"):
        write_scale_corpus(tmp_path / "c.parquet", k)
    assert not list(tmp_path.iterdir())


@pytest.mark.slow
def test_k1_has_the_real_corpus_shape_one_row_group_per_city(tmp_path: Path) -> None:
    path = tmp_path / "k1.parquet"
    corpus = write_scale_corpus(path, 1, seed=0)
    meta = pq.ParquetFile(path).metadata
    assert meta.num_row_groups == 8  # written a city at a time, never the whole corpus
    frame = pq.read_table(path).to_pandas()
    assert tuple(frame.columns) == COLUMNS
    assert len(frame) == corpus.rows == meta.num_rows
    projects = frame.groupby(["city", "district", "project"])
    assert projects.ngroups == REAL_PROJECTS
    # The real corpus: 18.8 months with sales per project of 48, median price 23,898.
    assert 14 <= len(frame) / projects.ngroups <= 22
    assert frame["month"].min() == "2019-01" and frame["month"].max() == "2022-12"
    assert 15_000 <= frame["avg_price"].median() <= 40_000
    assert (frame["avg_price"] < 100).any()  # the implausible prices are there too
    again = tmp_path / "again.parquet"
    write_scale_corpus(again, 1, seed=0)
    assert pq.read_table(again).equals(pq.read_table(path))
