"""Places and their projects: one set of scenarios, shared district and city shocks.

A district's or city's value is the plain mean of its projects' (docs/design.md §4.1), so
its forecast is the mean of theirs and every scenario of it the mean of theirs in that
scenario: the hierarchy is coherent by construction (bottom-up), which these tests hold.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from foretab.analyze import RuleAnalyzer, scenarios
from foretab.analyze.scenarios import Copula, draw_place_means, window_table
from foretab.core.months import Month
from foretab.core.plan import (
    Aggregate,
    EntityRef,
    Plan,
    ScopeOp,
    ScopeQuery,
    ScopeRef,
    Task,
    TimeWindow,
)
from foretab.core.series import Forecast, ForecastPoint, History
from foretab.forecast.source import DISTRIBUTION_GRID

R = Month(2021, 12)
JAN, FEB = Month(2022, 1), Month(2022, 2)
GRID = np.asarray(DISTRIBUTION_GRID)
DISTRICT = ScopeRef("Nanjing", "Jiangning District")
A, B = (EntityRef("Nanjing", "Jiangning District", n) for n in ("Ash", "Birch"))
C = EntityRef("Nanjing", "Gulou District", "Cedar")  # same city, another district
D = EntityRef("Suzhou", "Wuzhong", "Dale")  # another city
ALL = (A, B, C, D)
HISTORY = History({ref: {R - k: 10_000.0 + k for k in range(12)} for ref in ALL})


def _normal(mean: float, sd: float) -> ForecastPoint:
    qs = tuple(float(v) for v in mean + sd * norm.ppf(GRID))
    return ForecastPoint(mean, mean + sd * norm.ppf(0.1), mean + sd * norm.ppf(0.9), qs)


def _forecast(points: dict) -> Forecast:
    return Forecast("model:test", points, 0.8, {}, DISTRIBUTION_GRID, "backtest")


def _plan(refs: tuple[EntityRef, ...], last: Month = JAN, **scope: object) -> Plan:
    aggregate = Aggregate.VALUE if last == JAN else Aggregate.MEAN
    return Plan("q", R, refs, TimeWindow(JAN, last, "w"), aggregate, Task.FORECAST, **scope)  # type: ignore[arg-type]


def _standard(refs: tuple[EntityRef, ...], months: tuple[Month, ...] = (JAN,)) -> Forecast:
    return _forecast({ref: {m: _normal(0.0, 1.0) for m in months} for ref in refs})


def test_projects_of_one_city_move_together_through_the_city_shock() -> None:
    table = window_table(_plan(ALL), ALL, HISTORY, _standard(ALL))
    with scenarios.using(Copula(0.7, 0.1, 0.2)):
        draws = scenarios.draw_targets(table, Aggregate.MEAN, groups=scenarios.groups_of(ALL))
    corr = np.corrcoef(draws.T)
    assert corr[0, 1] == pytest.approx(0.3, abs=0.05)  # one district: district + city shock
    assert corr[0, 2] == pytest.approx(0.2, abs=0.05)  # one city, two districts
    assert abs(corr[0, 3]) < 0.05  # two cities: independent


def test_the_shocks_leave_each_projects_own_distribution_alone() -> None:
    months = (JAN, FEB)
    table = window_table(_plan(ALL, FEB), ALL, HISTORY, _standard(ALL, months))
    groups = scenarios.groups_of(ALL)
    spans = []
    for chosen in (Copula(0.7, 0.0, 0.0), Copula(0.7, 0.1, 0.3)):
        with scenarios.using(chosen):
            drawn = scenarios.draw_targets(table, Aggregate.MAX, groups=groups)
        spans.append(np.quantile(drawn, [0.1, 0.5, 0.9], axis=0))
    # a project's window maximum: the same quantiles (Monte Carlo error ≈ 0.03)
    np.testing.assert_allclose(spans[0], spans[1], atol=0.08)


def test_a_district_scenario_is_the_mean_of_its_projects_scenarios() -> None:
    refs = (A, B, C)
    months = (JAN, FEB)
    points = {
        ref: {m: _normal(10_000.0 + 1_000 * i, 500.0) for m in months} for i, ref in enumerate(refs)
    }
    table = window_table(_plan(refs, FEB), refs, HISTORY, _forecast(points))
    groups = [("Nanjing", "Jiangning District")] * 2 + [("Nanjing", "Gulou District")]
    with scenarios.using(Copula(0.7, 0.1, 0.1)):
        places = draw_place_means(table, np.asarray([0, 0, 1]), 2, n=500, groups=groups)
        projects = np.concatenate(
            [d for _, d in scenarios._drawn(table, 500, groups, scenarios.SEED)], axis=1
        )
    np.testing.assert_allclose(places[:, 0], projects[:, :2].mean(axis=1))
    np.testing.assert_allclose(places[:, 1], projects[:, 2])


def test_a_districts_mean_answer_is_the_mean_of_its_projects_answers() -> None:
    points = {A: {JAN: _normal(10_000.0, 800.0)}, B: {JAN: _normal(13_000.0, 400.0)}}
    analyzer = RuleAnalyzer()
    district = analyzer.analyze(
        _plan((A, B), scopes=(DISTRICT,), scope=ScopeQuery(ScopeOp.MEAN)),
        HISTORY,
        _forecast(points),
    )
    each = [analyzer.analyze(_plan((ref,)), HISTORY, _forecast(points)) for ref in (A, B)]
    assert district.answer == [[np.mean([float(a.answer[0][0]) for a in each])]]
    # and its interval lies inside the range its projects' intervals span
    (mean,) = district.intervals
    assert min(a.intervals[0].lo for a in each) < mean.lo < mean.hi
    assert mean.hi < max(a.intervals[0].hi for a in each)


def test_the_city_shock_is_said_in_the_trace() -> None:
    with scenarios.using(Copula(0.7, 0.1, 0.2)):
        said = scenarios.described()
    assert "shared shock 0.1 within a group, 0.2 within an outer place" in said


def test_shocks_beyond_the_lasting_error_are_refused() -> None:
    from foretab.errors import QuestionError

    with pytest.raises(QuestionError, match="--outer-correlation"):
        Copula(0.3, 0.2, 0.2)
