"""Probabilities of reasoning answers and intervals in numeric texts, on hand-made forecasts."""

from __future__ import annotations

import math

import numpy as np
import pytest

from foretab.analyze import RuleAnalyzer, probability, scenarios
from foretab.core.months import Month
from foretab.core.plan import (
    Aggregate,
    ChangeMeasure,
    Comparison,
    EntityRef,
    Plan,
    Task,
    TimeWindow,
)
from foretab.core.series import Forecast, ForecastPoint, History
from foretab.errors import QuestionError
from foretab.forecast.source import DISTRIBUTION_GRID

R = Month(2021, 12)
JAN, FEB = Month(2022, 1), Month(2022, 2)
A = EntityRef("Nanjing", "Jiangning District", "Sun Garden")
B = EntityRef("Nanjing", "Jiangning District", "Lake Bay")
HISTORY = History({A: {R: 10_000.0}, B: {R: 10_000.0}})
GRID = np.asarray(DISTRIBUTION_GRID)


def _point(value: float, quantile: np.ufunc | object) -> ForecastPoint:
    qs = tuple(float(v) for v in quantile(GRID))  # type: ignore[operator]
    return ForecastPoint(value, qs[9], qs[-10], qs)


def _skewed(value: float) -> ForecastPoint:
    """Point 10,050 but 70% of the mass below 10,000: the point and the odds disagree."""
    return _point(
        value, lambda u: np.where(u < 0.7, 9_000 + 1_000 * u / 0.7, 10_000 + 500 * (u - 0.7) / 0.3)
    )


def _plan(
    comparison: Comparison, projects: tuple[EntityRef, ...], agg: Aggregate = Aggregate.VALUE
) -> Plan:
    task = Task.FORECAST if comparison is Comparison.NONE else Task.REASONING
    last = JAN if agg is Aggregate.VALUE else FEB
    return Plan(
        "q",
        R,
        projects,
        TimeWindow(JAN, last, "next month"),
        agg,
        task,
        comparison,
        ChangeMeasure.ABSOLUTE,
    )


def _forecast(points: dict) -> Forecast:
    return Forecast("model:test", points, 0.8, {}, DISTRIBUTION_GRID, "backtest")


def test_most_probable_answer_can_differ_from_the_point_verdict() -> None:
    plan = _plan(Comparison.VS_CURRENT, (A,))
    forecast = _forecast({A: {JAN: _skewed(10_050.0)}})
    point = RuleAnalyzer("point").analyze(plan, HISTORY, forecast)
    best = RuleAnalyzer("most-probable").analyze(plan, HISTORY, forecast)
    assert point.answer == [["Increase"]]
    assert point.probability == pytest.approx(0.3, abs=0.03)
    assert best.answer == [["Decrease"]]
    assert best.probability == pytest.approx(0.7, abs=0.03)
    assert f"{best.probability:.0%}" in best.text and "Increase" in best.text


def test_independent_identical_projects_are_a_coin_flip() -> None:
    plan = _plan(Comparison.HIGHEST, (A, B))
    same = {ref: {JAN: _point(10_000.0, lambda u: 9_000 + 2_000 * u)} for ref in (A, B)}
    result = RuleAnalyzer().analyze(plan, HISTORY, _forecast(same))
    assert result.probability == pytest.approx(0.5, abs=0.04)


def test_which_rise_gives_the_most_probable_set() -> None:
    plan = _plan(Comparison.WHICH_RISE, (A, B))
    up = _point(10_300.0, lambda u: 10_100 + 400 * u)  # rises for sure
    down = _skewed(10_050.0)  # point says rise, 70% fall
    result = RuleAnalyzer("most-probable").analyze(
        plan, HISTORY, _forecast({A: {JAN: up}, B: {JAN: down}})
    )
    assert result.answer == [["Sun Garden"]]
    assert result.probability == pytest.approx(0.7, abs=0.03)


C = EntityRef("Nanjing", "Jiangning District", "River Court")


def test_max_f1_lists_a_likely_mover_where_the_most_probable_set_is_none() -> None:
    # None 36%, {A} 34%, {A, B} 30%: "None" is the likeliest outcome, but listing A is
    # right in part 64% of the time (expected F1 0.34 + 0.30 * 2/3 = 0.54 against 0.36).
    plan = _plan(Comparison.WHICH_RISE, (A, B))
    probs = np.asarray([0.36, 0.34, 0.0, 0.30])  # codes: bit k set = entity k rises
    assert probability.choose(plan, probs, 0, "most-probable") == 0
    assert probability.choose(plan, probs, 0, "max-f1") == 1
    assert probability.choose(plan, probs, 0, "point") == 0
    expected = [0.36, 0.34 + 0.30 * 2 / 3, 0.30 * 2 / 3, 0.34 * 2 / 3 + 0.30]
    assert probability.overlap(plan) @ probs == pytest.approx(expected)
    # The mean of exactly right and F1: None 0.36, {A} (0.34 + 0.54) / 2 = 0.44.
    assert probability.choose(plan, probs, 0, "balanced") == 1
    # None 42%, {A} 14%, {B} 14%, {A, B} 30%: max-f1 lists both (expected F1 0.49 against
    # 0.42); balanced keeps None ((0.42 + 0.42) / 2 against (0.30 + 0.49) / 2).
    split = np.asarray([0.42, 0.14, 0.14, 0.30])
    assert probability.choose(plan, split, 0, "max-f1") == 3
    assert probability.choose(plan, split, 0, "balanced") == 0


def test_max_f1_equals_most_probable_for_one_item_answers() -> None:
    plan = _plan(Comparison.RISES_MOST, (A, B, C))
    probs = np.asarray([0.3, 0.2, 0.1, 0.4])  # A, B, C, None
    assert probability.overlap(plan) == pytest.approx(np.eye(4))
    assert probability.choose(plan, probs, 1, "max-f1") == 3
    # On a tie the point forecasts' answer stays.
    even = np.asarray([0.4, 0.4, 0.1, 0.1])
    assert probability.choose(plan, even, 1, "max-f1") == 1


def test_max_f1_answers_both_of_two_coin_flips_most_probable_none() -> None:
    plan = _plan(Comparison.WHICH_RISE, (A, B))
    rises_45 = _point(9_950.0, lambda u: 9_450 + 1_000 * u)  # above 10,000 when u > 0.55
    forecast = _forecast({A: {JAN: rises_45}, B: {JAN: rises_45}})
    best = RuleAnalyzer("most-probable").analyze(plan, HISTORY, forecast)
    f1 = RuleAnalyzer("max-f1").analyze(plan, HISTORY, forecast)
    assert best.answer == [["None"]]
    assert f1.answer == [["Sun Garden"], ["Lake Bay"]] and f1.decision == "max-f1"
    assert f1.probability == pytest.approx(0.2, abs=0.04)  # both rise: stated honestly
    # Both rise 20%, one of them 50%: the mean of exactly right and F1 lists both too.
    assert RuleAnalyzer("balanced").analyze(plan, HISTORY, forecast).answer == f1.answer
    assert "expected F1" in f1.text


def test_numeric_text_shows_the_interval_of_a_window_mean() -> None:
    plan = _plan(Comparison.NONE, (A,), Aggregate.MEAN)
    pts = {
        JAN: ForecastPoint(10_000.0, 9_000.0, 11_000.0),
        FEB: ForecastPoint(12_000.0, 11_000.0, 13_000.0),
    }
    result = RuleAnalyzer().analyze(plan, HISTORY, Forecast("model:test", {A: pts}, 0.8))
    assert "11,000.00 (80%: 10,000–12,000)" in result.text
    assert result.probability is None


def test_no_distribution_leaves_the_point_answer_alone() -> None:
    plan = _plan(Comparison.VS_CURRENT, (A,))
    forecast = Forecast("none", {A: {JAN: ForecastPoint(10_050.0)}})
    result = RuleAnalyzer().analyze(plan, HISTORY, forecast)
    assert result.answer == [["Increase"]] and result.probability is None


def test_unknown_decision_rule_is_refused() -> None:
    with pytest.raises(QuestionError, match="--decision"):
        RuleAnalyzer("gut-feeling")


def test_threshold_answers_get_the_probability_of_yes_or_no() -> None:
    from dataclasses import replace

    from foretab.core.plan import Threshold

    plan = replace(_plan(Comparison.NONE, (A,)), threshold=Threshold(above=True, value=10_000.0))
    forecast = _forecast({A: {JAN: _skewed(10_050.0)}})
    point = RuleAnalyzer("point").analyze(plan, HISTORY, forecast)
    best = RuleAnalyzer("most-probable").analyze(plan, HISTORY, forecast)
    assert point.answer == [["Yes"]] and point.probability == pytest.approx(0.3, abs=0.03)
    assert best.answer == [["No"]] and best.probability == pytest.approx(0.7, abs=0.03)


def test_a_windows_maximum_is_likelier_above_now_than_its_months_medians_say() -> None:
    # Both months centred on today's price: a comonotone draw makes "the highest price of
    # January-February is above now" a coin flip; with months' own noise it is likelier.
    plan = _plan(Comparison.VS_CURRENT, (A,), Aggregate.MAX)
    flat = {A: {m: _point(10_000.0, lambda u: 9_000 + 2_000 * u) for m in (JAN, FEB)}}
    result = RuleAnalyzer("most-probable").analyze(plan, HISTORY, _forecast(flat))
    assert result.answer == [["Increase"]]
    # P(max of two months with correlation rho above their median) = 1 - P(both below)
    # = 1 - (1/4 + asin(rho) / (2 pi)); 2/3 at rho = 0.5.
    rho = scenarios.MONTH_CORRELATION
    assert result.probability == pytest.approx(0.75 - math.asin(rho) / (2 * math.pi), abs=0.03)


def test_which_month_answers_state_the_share_of_scenarios_peaking_then() -> None:
    from dataclasses import replace

    from foretab.core.plan import Extreme

    plan = replace(
        _plan(Comparison.NONE, (A,), Aggregate.MAX),
        task=Task.FORECAST,
        which_month=Extreme.HIGHEST,
    )
    forecast = _forecast(
        {
            A: {
                JAN: _point(10_000.0, lambda u: 9_000 + 2_000 * u),
                FEB: _point(10_300.0, lambda u: 9_300 + 2_000 * u),
            }
        }
    )
    result = RuleAnalyzer("most-probable").analyze(plan, HISTORY, forecast)
    assert result.answer == [[FEB.label]]
    assert result.probability is not None and 0.55 < result.probability < 0.9
    assert "probability" in result.text
    far = _forecast(
        {
            A: {
                JAN: _point(10_000.0, lambda u: 9_999 + 2 * u),
                FEB: _point(12_000.0, lambda u: 11_999 + 2 * u),
            }
        }
    )
    assert RuleAnalyzer("point").analyze(plan, HISTORY, far).probability == pytest.approx(1.0)


def test_a_change_vs_now_states_the_interval_of_the_change() -> None:
    from dataclasses import replace

    base = replace(_plan(Comparison.NONE, (A,)), task=Task.FORECAST)
    forecast = _forecast({A: {JAN: _point(10_500.0, lambda u: 9_500 + 2_000 * u)}})
    lo, hi = forecast.points[A][JAN].lo, forecast.points[A][JAN].hi
    assert lo is not None and hi is not None
    pct = RuleAnalyzer().analyze(replace(base, change=ChangeMeasure.RELATIVE), HISTORY, forecast)
    assert pct.answer == [[5.0]]
    assert f"+5.00% (80%: {(lo - 10_000) / 100:+.1f}% to {(hi - 10_000) / 100:+.1f}%)" in pct.text
    absolute = RuleAnalyzer().analyze(
        replace(base, change=ChangeMeasure.ABSOLUTE), HISTORY, forecast
    )
    assert f"+500.00 (80%: {lo - 10_000:+,.0f} to {hi - 10_000:+,.0f})" in absolute.text


def test_held_share_counts_the_steps_where_the_price_did_not_move() -> None:
    prices = {R - k: 10_000.0 for k in range(6)} | {R - 6: 9_900.0, R - 7: 9_800.0}
    assert scenarios.held_share(prices, R) == pytest.approx(5 / 7)
    assert scenarios.held_share({R: 10_000.0}, R) == 0.0  # no step to judge by
    gap = {R: 10_000.0, R - 2: 10_000.0}  # not consecutive months: no step
    assert scenarios.held_share(gap, R) == 0.0


def test_a_price_held_for_a_year_most_likely_stays_unchanged() -> None:
    # The forecast says up or down evenly; the price has not moved in 12 months.
    flat = History({A: {R - k: 10_000.0 for k in range(12)}})
    plan = _plan(Comparison.VS_CURRENT, (A,))
    even = _point(10_010.0, lambda u: 9_500 + 1_000 * u)
    result = RuleAnalyzer().analyze(plan, flat, _forecast({A: {JAN: even}}))
    assert result.answer == [["No change"]]
    assert result.probability == pytest.approx(1.0)
    moving = History({A: {R - k: 10_000.0 + k for k in range(12)}})
    other = RuleAnalyzer().analyze(plan, moving, _forecast({A: {JAN: even}}))
    assert other.answer != [["No change"]]


def test_a_held_price_is_neither_a_riser_nor_a_faller() -> None:
    # A held half the steps; B moved every month and rises for sure.
    history = History(
        {
            A: {R - k: 10_000.0 + (k // 2) * 10 for k in range(12)},
            B: {R - k: 10_000.0 - k for k in range(12)},
        }
    )
    plan = _plan(Comparison.WHICH_RISE, (A, B))
    rises = _point(10_300.0, lambda u: 10_100 + 400 * u)
    result = RuleAnalyzer("point").analyze(
        plan, history, _forecast({A: {JAN: rises}, B: {JAN: rises}})
    )
    assert result.answer == [["Sun Garden"], ["Lake Bay"]]
    assert scenarios.held_share(history[A], R) == pytest.approx(6 / 11)
    assert result.probability == pytest.approx(1 - 6 / 11, abs=0.03)  # A holds otherwise
