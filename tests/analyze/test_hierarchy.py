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


def _by_month(chosen: Copula) -> np.ndarray:
    """``[n, entities, months]`` draws of A, B (one district) over January and February."""
    refs = (A, B)
    months = (JAN, FEB)
    table = window_table(_plan(refs, FEB), refs, HISTORY, _standard(refs, months))
    with scenarios.using(chosen):
        return np.concatenate(
            [d for _, d in scenarios._drawn(table, 4000, scenarios.groups_of(refs), 0)], axis=1
        )


def test_a_fleeting_shock_moves_a_month_but_not_the_window() -> None:
    lasting = _by_month(Copula(0.7, 0.1, 0.1, 0.0))
    fleeting = _by_month(Copula(0.7, 0.1, 0.1, 1.0))
    for drawn in (lasting, fleeting):
        # within a month, two projects of one district correlate shared + outer (0.2)
        assert np.corrcoef(drawn[:, 0, 0], drawn[:, 1, 0])[0, 1] == pytest.approx(0.2, abs=0.05)
        # and each project's two months correlate 0.7 either way
        assert np.corrcoef(drawn[:, 0, 0], drawn[:, 0, 1])[0, 1] == pytest.approx(0.7, abs=0.05)
    # across months the lasting shock still ties them; the fleeting one does not
    assert np.corrcoef(lasting[:, 0, 0], lasting[:, 1, 1])[0, 1] == pytest.approx(0.2, abs=0.05)
    assert abs(np.corrcoef(fleeting[:, 0, 0], fleeting[:, 1, 1])[0, 1]) < 0.05


def test_one_projects_answers_never_see_the_fleeting_share() -> None:
    months = (JAN, FEB)
    table = window_table(_plan((A,), FEB), (A,), HISTORY, _standard((A,), months))
    drawn = []
    for share in (0.0, 1.0):
        with scenarios.using(Copula(0.7, 0.05, 0.05, share)):
            drawn.append(scenarios.draw_targets(table, Aggregate.MAX))
    np.testing.assert_array_equal(*drawn)  # no place shock at all: the same draws


def test_the_fleeting_part_never_exceeds_the_month_noise() -> None:
    from foretab.errors import QuestionError

    with pytest.raises(QuestionError, match="--fleeting-share"):
        Copula(0.7, 0.1, 0.1, 1.5)
    # 0.2 of shocks and 0.1 of month noise: half the shocks can pass, as at 0.5
    np.testing.assert_array_equal(
        _by_month(Copula(0.9, 0.1, 0.1, 1.0)), _by_month(Copula(0.9, 0.1, 0.1, 0.5))
    )
    # comonotone months: the shocks last, as without a fleeting share
    np.testing.assert_array_equal(
        _by_month(Copula(1.0, 0.1, 0.1, 1.0)), _by_month(Copula(1.0, 0.1, 0.1, 0.0))
    )
    assert "drawn afresh each month" in _described(Copula(0.7, 0.05, 0.05, 0.5))


def _described(chosen: Copula) -> str:
    with scenarios.using(chosen):
        return scenarios.described()
