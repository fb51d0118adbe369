"""Place shocks that grow with the horizon (``Copula.growth``): a random walk per place.

A fall that lasts (2022) takes a place further from its forecast the further ahead the
month. With ``growth`` g the shocks' variance at h months after R is ``(shared + outer)
× (1 + g h)``, the walk's part taken from the month noise (never more than all of it);
at 0 the draws are the old ones bit for bit.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scipy.stats import norm

from foretab.analyze import RuleAnalyzer, scenarios
from foretab.analyze.scenarios import Copula, WindowTable, window_table
from foretab.core.months import Month
from foretab.core.plan import Aggregate, EntityRef, Plan, Task, TimeWindow
from foretab.core.series import Forecast, ForecastPoint, History
from foretab.errors import QuestionError
from foretab.forecast.source import DISTRIBUTION_GRID
from tests.analyze.test_drawn_blocks import _plain, _table

R = Month(2021, 12)
MONTHS = tuple(R + k for k in range(1, 13))
A, B = (EntityRef("Nanjing", "Jiangning District", n) for n in ("Ash", "Birch"))
C = EntityRef("Nanjing", "Gulou District", "Cedar")  # same city, another district
D = EntityRef("Suzhou", "Wuzhong", "Dale")  # another city
ALL = (A, B, C, D)
HISTORY = History({ref: {R - k: 10_000.0 + k for k in range(12)} for ref in ALL})
# Standard normal quantiles in the deep tails too: the draws are the normal scores.
GRID = (0.0001, *DISTRIBUTION_GRID, 0.9999)


def _standard() -> Forecast:
    qs = tuple(float(v) for v in norm.ppf(GRID))
    point = ForecastPoint(0.0, norm.ppf(0.1), norm.ppf(0.9), qs)
    points = {ref: dict.fromkeys(MONTHS, point) for ref in ALL}
    return Forecast("model:test", points, 0.8, {}, GRID, "backtest")


def _plan(refs: tuple[EntityRef, ...] = ALL, first: Month = MONTHS[0]) -> Plan:
    return Plan("q", R, refs, TimeWindow(first, MONTHS[-1], "w"), Aggregate.MAX, Task.FORECAST)


def _drawn(chosen: Copula, n: int = 20_000, table: WindowTable | None = None) -> np.ndarray:
    """``[n, entities, months]`` draws of A, B, C, D over the 12 months after R."""
    table = table or window_table(_plan(), ALL, HISTORY, _standard())
    with scenarios.using(chosen):
        groups = scenarios.groups_of(table.refs)
        return np.concatenate([d for _, d in scenarios._drawn(table, n, groups, 0)], axis=1)


def _corr(drawn: np.ndarray, a: int, b: int, month: int, other: int | None = None) -> float:
    return float(
        np.corrcoef(drawn[:, a, month], drawn[:, b, month if other is None else other])[0, 1]
    )


def test_the_window_table_knows_each_months_horizon() -> None:
    table = window_table(_plan(first=R - 1), ALL, HISTORY, _standard())
    assert table.horizon is not None
    assert table.horizon.tolist() == [-1, 0, *range(1, 13)]
    assert table.subset(np.asarray([1])).horizon.tolist() == table.horizon.tolist()


def test_the_shocks_variance_grows_with_the_horizon_as_specified() -> None:
    drawn = _drawn(Copula(0.7, 0.05, 0.05, 0.0, 0.2))
    for h in (1, 6, 12):
        month = h - 1
        # one district: shared + outer, times 1 + g h
        assert _corr(drawn, 0, 1, month) == pytest.approx(0.1 * (1 + 0.2 * h), abs=0.03)
        # one city, two districts: outer, times 1 + g h
        assert _corr(drawn, 0, 2, month) == pytest.approx(0.05 * (1 + 0.2 * h), abs=0.03)
        # two cities: independent
        assert abs(_corr(drawn, 0, 3, month)) < 0.03
        # each project's own distribution is the same (its normal scores stay standard)
        assert drawn[:, 0, month].std() == pytest.approx(1.0, abs=0.03)
    # across months the walk ties them by its variance at the earlier month
    assert _corr(drawn, 0, 1, 0, 11) == pytest.approx(0.1 * (1 + 0.2), abs=0.03)
    assert _corr(drawn, 0, 0, 0, 11) == pytest.approx(0.7 + 0.1 * 0.2, abs=0.03)
    assert _corr(drawn, 0, 0, 5, 11) == pytest.approx(0.7 + 0.1 * 0.2 * 6, abs=0.03)


def test_without_growth_a_place_shock_is_the_same_at_every_horizon() -> None:
    drawn = _drawn(Copula(0.7, 0.05, 0.05))
    assert _corr(drawn, 0, 1, 0) == pytest.approx(0.1, abs=0.03)
    assert _corr(drawn, 0, 1, 11) == pytest.approx(0.1, abs=0.03)


def test_the_walk_stops_when_it_has_taken_all_the_month_noise() -> None:
    # 0.1 of shocks growing by all of itself a month: the 0.3 of month noise is gone at 3
    drawn = _drawn(Copula(0.7, 0.05, 0.05, 0.0, 1.0), n=4000)
    np.testing.assert_array_equal(drawn[:, :, 2], drawn[:, :, 11])  # comonotone from then on
    assert not np.array_equal(drawn[:, :, 1], drawn[:, :, 2])
    assert _corr(drawn, 0, 1, 11) == pytest.approx(0.1 + 0.3, abs=0.05)


def test_months_up_to_r_and_tables_without_horizons_do_not_grow() -> None:
    table = window_table(_plan(), ALL, HISTORY, _standard())
    unknown = replace(table, horizon=None)
    before = replace(table, horizon=np.zeros(12, dtype=int))  # every month up to R
    still = _drawn(Copula(0.7, 0.05, 0.05), n=500, table=table)
    for other in (unknown, before):
        np.testing.assert_array_equal(_drawn(Copula(0.7, 0.05, 0.05, 0.0, 0.5), 500, other), still)


def random_table(seed: int) -> tuple[WindowTable, list[tuple[str, str]]]:
    """A random table of ``test_drawn_blocks`` with horizons around R, and its groups."""
    rng = np.random.default_rng(seed)
    entities, months = int(rng.integers(1, 30)), int(rng.integers(1, 13))
    table = _table(rng, entities, months, even=seed % 2 == 0, held=seed % 3 == 0)
    table = replace(table, horizon=np.arange(months) - int(rng.integers(0, 3)))
    return table, [(r.outer, r.inner) for r in table.refs]


@pytest.mark.parametrize("seed", range(8))
def test_growth_0_draws_the_old_draws_bit_for_bit(seed: int) -> None:
    table, groups = random_table(seed)
    chosen = Copula(0.8, 0.1, 0.05, [0.0, 0.5][seed % 2], 0.0)
    with scenarios.using(chosen):
        new = list(scenarios._drawn(table, 200, groups, seed))
        old = list(_plain(table, 200, groups, seed))
    for (_, a), (_, b) in zip(new, old, strict=True):
        assert a.tobytes() == b.tobytes()
    with scenarios.using(Copula(0.8, 0.1, 0.05, [0.0, 0.5][seed % 2], 0.3)):
        grown = np.concatenate([d for _, d in scenarios._drawn(table, 200, groups, seed)], axis=1)
    if (table.horizon > 0).any() and (table.present & table.forecast).any():
        assert not np.array_equal(grown, np.concatenate([d for _, d in new], axis=1))


def test_one_projects_window_interval_never_sees_the_growth() -> None:
    told = []
    for growth in (0.0, 0.5):
        analyzer = RuleAnalyzer(copula=Copula(0.7, 0.05, 0.05, 0.0, growth))
        told.append(analyzer.analyze(_plan((A,)), HISTORY, _standard()).intervals)
    assert told[0] == told[1] and told[0]


def test_a_negative_growth_is_refused_and_a_growth_is_said() -> None:
    with pytest.raises(QuestionError, match="--shock-growth"):
        Copula(0.7, 0.05, 0.05, 0.0, -0.1)
    with scenarios.using(Copula(0.7, 0.05, 0.05, 0.0, 0.1)):
        said = scenarios.described()
    assert "growing by 0.1 of itself a month ahead" in said
    with scenarios.using(Copula(0.7, 0.0, 0.0, 0.0, 0.1)):  # no shock: nothing grows
        assert "growing" not in scenarios.described()
