"""The synthetic demo corpus: deterministic, the ingest format, and realistic in shape."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from foretab.core.months import Month, month_range
from foretab.demo.generate import DemoError, generate_corpus
from foretab.demo.geography import CITIES
from foretab.demo.names import project_names

KEY = ["city", "district", "project"]


@pytest.fixture(scope="module")
def corpus() -> pd.DataFrame:
    return generate_corpus(0)


def _month_index(months: pd.Series) -> pd.Series:
    return months.str[:4].astype(int) * 12 + months.str[5:].astype(int)


def test_same_seed_same_frame_different_seed_different_frame(corpus: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(corpus, generate_corpus(0))
    other = generate_corpus(1)
    assert not other.equals(corpus)
    assert set(other["project"]) != set(corpus["project"])


def test_ingest_format(corpus: pd.DataFrame) -> None:
    assert list(corpus.columns[:6]) == [
        "city",
        "district",
        "project",
        "month",
        "avg_price",
        "units_sold",
    ]
    assert {"city_zh", "district_zh", "project_zh"} <= set(corpus.columns)
    assert corpus["month"].str.fullmatch(r"\d{4}-(0[1-9]|1[0-2])").all()
    assert not corpus.isna().any().any()
    assert not corpus.duplicated(["city", "district", "project", "month"]).any()
    assert corpus["units_sold"].dtype.kind == "i"
    assert (corpus["units_sold"] >= 1).all()


def test_size_cities_districts_months(corpus: pd.DataFrame) -> None:
    assert corpus[KEY].drop_duplicates().shape[0] == 180
    assert corpus["city"].nunique() == len(CITIES) >= 3
    assert corpus.groupby("city")["district"].nunique().min() >= 5
    expected = [m.iso for m in month_range(Month(2021, 1), Month(2024, 12))]
    assert sorted(corpus["month"].unique()) == expected


def test_parameters_change_window_and_size() -> None:
    small = generate_corpus(5, start=Month(2019, 7), months=24, n_projects=100)
    assert small["month"].min() == "2019-07"
    assert small["month"].max() == "2021-06"
    assert small[KEY].drop_duplicates().shape[0] == 100


@pytest.mark.parametrize(
    ("months", "n_projects", "fragment"),
    [(1, 180, "months must be at least 2"), (48, 20, "n_projects must be at least")],
)
def test_bad_parameters_are_explained(months: int, n_projects: int, fragment: str) -> None:
    with pytest.raises(DemoError, match=fragment):
        generate_corpus(0, months=months, n_projects=n_projects)


def test_sparsity_like_the_real_corpus(corpus: pd.DataFrame) -> None:
    month = _month_index(corpus["month"])
    groups = month.groupby([corpus[k] for k in KEY])
    first, last, count = groups.min(), groups.max(), groups.size()
    span = last - first + 1
    start, end = month.min(), month.max()
    # Some projects sell from the start, most launch later, some sell out before the end.
    assert 0.15 < (first == start).mean() < 0.45
    assert (last < end).mean() > 0.25
    # About one month in four without sales inside a project's life (real corpus: 0.76).
    assert 0.65 < (count / span).mean() < 0.9
    assert (count < span).mean() > 0.5
    assert count.min() >= 1


def test_names_unique_within_each_district(corpus: pd.DataFrame) -> None:
    # One Chinese name per (district, project): no two projects were merged under one name.
    assert (corpus.groupby(KEY)["project_zh"].nunique() == 1).all()
    assert (corpus.groupby(["city", "district", "project_zh"])["project"].nunique() == 1).all()
    rng = np.random.default_rng(0)
    taken = {"Vanke Tianyue Garden"}
    names = [n.name for n in project_names(rng, 300, taken)]
    assert len(set(names)) == 300
    assert "Vanke Tianyue Garden" not in names
    assert set(names) < taken


def test_price_levels_per_city(corpus: pd.DataFrame) -> None:
    median = corpus.groupby("city")["avg_price"].median()
    for city in CITIES:
        # Within a factor of ~1.5 of the city's typical new-home price (yuan/m²).
        assert city.base_price / 1.6 < median[city.name] < city.base_price * 1.6
    assert median["Xiamen"] > 1.5 * median["Chengdu"]
    assert corpus["avg_price"].between(5_000, 200_000).mean() > 0.99


def test_a_few_outliers(corpus: pd.DataFrame) -> None:
    log_price = np.log(corpus["avg_price"])
    deviation = log_price - log_price.groupby([corpus[k] for k in KEY]).transform("median")
    outliers = int((deviation.abs() > np.log(3)).sum())
    assert 3 <= outliers <= len(corpus) // 100


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_market_trend_with_a_downturn_and_a_shock(seed: int) -> None:
    frame = generate_corpus(seed)
    log_price = np.log(frame["avg_price"])
    relative = log_price - log_price.groupby([frame[k] for k in KEY]).transform("median")
    plausible = relative.abs() < 0.5
    index = relative[plausible].groupby(frame["month"][plausible]).mean()
    # Prices rise to a peak and fall back: the last half-year sits clearly below the peak.
    assert index.max() - index.iloc[-6:].mean() > 0.02
    assert index.idxmax() < index.index[-12]
    # The shock month: far fewer projects report sales than in the months around it.
    counts = frame.groupby("month").size()
    assert (counts / counts.rolling(5, center=True).median()).min() < 0.65
