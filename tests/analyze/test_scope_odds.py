"""Uncertainty of scope answers and window intervals, on small hand-made forecasts.

Each expectation is an exact computation (normal marginals through a Gaussian copula),
checked against the scenario draws with a tolerance of a few Monte Carlo standard errors
(4,000 draws: a probability's standard error is at most 0.8 points).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from scipy.stats import norm

from foretab.analyze import RuleAnalyzer, scenarios
from foretab.analyze.scenarios import draw_targets, window_table
from foretab.core.months import Month
from foretab.core.plan import (
    Aggregate,
    EntityRef,
    Extreme,
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
JAN, FEB, MAR = Month(2022, 1), Month(2022, 2), Month(2022, 3)
GRID = np.asarray(DISTRIBUTION_GRID)
SCOPE = ScopeRef("Nanjing", "Jiangning District")
A, B, C, D = (
    EntityRef("Nanjing", "Jiangning District", n) for n in ("Ash", "Birch", "Cedar", "Dale")
)
ELSEWHERE = EntityRef("Suzhou", "Wuzhong", "Elm")
#: Every entity sold in each of the 12 months up to R (so it sells in every scenario), at a
#: price that moved every month (a held price would hold in some scenarios).
HISTORY = History(
    {ref: {R - k: 10_000.0 + k for k in range(12)} for ref in (A, B, C, D, ELSEWHERE)}
)


def _normal(mean: float, sd: float) -> ForecastPoint:
    qs = tuple(float(v) for v in mean + sd * norm.ppf(GRID))
    return ForecastPoint(mean, mean + sd * norm.ppf(0.1), mean + sd * norm.ppf(0.9), qs)


def _forecast(points: dict) -> Forecast:
    return Forecast("model:test", points, 0.8, {}, DISTRIBUTION_GRID, "backtest")


def _scope_plan(query: ScopeQuery, projects: tuple[EntityRef, ...], last: Month = JAN) -> Plan:
    return Plan(
        "q",
        R,
        projects,
        TimeWindow(JAN, last, "next month"),
        Aggregate.VALUE if last == JAN else Aggregate.MEAN,
        Task.FORECAST,
        scopes=(SCOPE,),
        scope=query,
    )


def _window_plan(aggregate: Aggregate, last: Month = FEB) -> Plan:
    return Plan("q", R, (A,), TimeWindow(JAN, last, "w"), aggregate, Task.FORECAST)


def _quantile_se(sd: float, level: float = 0.9, n: int = scenarios.N_SCENARIOS) -> float:
    """Standard error of a normal's ``level`` quantile estimated from ``n`` draws."""
    return math.sqrt(level * (1 - level) / n) / norm.pdf(norm.ppf(level)) * sd


# --- the draws themselves -----------------------------------------------------------------


def test_draws_of_one_month_follow_its_quantiles() -> None:
    point = _normal(10_000.0, 500.0)
    table = window_table(
        _window_plan(Aggregate.VALUE, JAN), (A,), HISTORY, _forecast({A: {JAN: point}})
    )
    draws = draw_targets(table, Aggregate.MEAN)[:, 0]
    for level in (0.1, 0.5, 0.9):
        assert np.quantile(draws, level) == pytest.approx(10_000 + 500 * norm.ppf(level), abs=30)


def test_months_of_one_entity_have_the_copula_correlation() -> None:
    points = {JAN: _normal(0.0, 1.0), FEB: _normal(0.0, 1.0)}
    table = window_table(_window_plan(Aggregate.MEAN), (A,), HISTORY, _forecast({A: points}))
    both = scenarios.draw_months(table)[:, 0, :]
    assert np.corrcoef(both.T)[0, 1] == pytest.approx(scenarios.MONTH_CORRELATION, abs=0.05)


def test_entities_of_a_group_share_a_shock_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scenarios, "SHARED_CORRELATION", 0.3)
    monkeypatch.setattr(scenarios, "OUTER_CORRELATION", 0.0)  # "g", "h": no place above
    points = {ref: {JAN: _normal(0.0, 1.0)} for ref in (A, B, ELSEWHERE)}
    plan = _window_plan(Aggregate.VALUE, JAN)
    table = window_table(plan, (A, B, ELSEWHERE), HISTORY, _forecast(points))
    draws = draw_targets(table, Aggregate.MEAN, groups=["g", "g", "h"])
    corr = np.corrcoef(draws.T)
    assert corr[0, 1] == pytest.approx(0.3, abs=0.05)  # same group
    assert abs(corr[0, 2]) < 0.05  # another group


# --- window intervals: from the draws, not the months' bounds -----------------------------


def test_window_mean_interval_comes_from_the_correlated_draws() -> None:
    sd = 1_000.0
    points = {A: {JAN: _normal(10_000.0, sd), FEB: _normal(10_000.0, sd)}}
    result = RuleAnalyzer().analyze(_window_plan(Aggregate.MEAN), HISTORY, _forecast(points))
    (interval,) = result.intervals
    # Mean of two unit normals with correlation rho: sd sqrt((1 + rho) / 2) (clipping the
    # draws at the 1% / 99% quantiles leaves the 10% / 90% quantiles alone). Tolerance:
    # three standard errors of a 90% quantile from 4,000 draws.
    rho = scenarios.MONTH_CORRELATION
    sd_mean = sd * math.sqrt((1 + rho) / 2)
    half = norm.ppf(0.9) * sd_mean
    tolerance = 3 * _quantile_se(sd_mean)
    assert interval.row == 0
    assert interval.lo == pytest.approx(10_000 - half, abs=tolerance)
    assert interval.hi == pytest.approx(10_000 + half, abs=tolerance)
    # Narrower than the comonotone months' bounds (10,000 ± 1,282).
    assert interval.hi - interval.lo < 2 * norm.ppf(0.9) * sd - 200
    assert "scenarios" in result.uncertainty
    assert f"10,000.00 (80%: {interval.lo:,.0f}–{interval.hi:,.0f})" in result.text


def test_window_maximum_interval_is_the_quantiles_of_the_drawn_maximum() -> None:
    points = {A: {m: _normal(10_000.0, 1_000.0) for m in (JAN, FEB, MAR)}}
    plan = _window_plan(Aggregate.MAX, MAR)
    result = RuleAnalyzer().analyze(plan, HISTORY, _forecast(points))
    (interval,) = result.intervals
    # Reference: a large independent Monte Carlo of the same copula.
    rng = np.random.default_rng(123)
    rho = scenarios.MONTH_CORRELATION
    z = math.sqrt(rho) * rng.standard_normal((200_000, 1)) + math.sqrt(
        1 - rho
    ) * rng.standard_normal((200_000, 3))
    u = norm.cdf(z)
    drawn = np.interp(u, GRID, 10_000 + 1_000 * norm.ppf(GRID)).max(axis=1)
    lo, hi = np.quantile(drawn, [0.1, 0.9])
    tolerance = 3 * _quantile_se(float(np.std(drawn)))
    assert interval.lo == pytest.approx(lo, abs=tolerance)
    assert interval.hi == pytest.approx(hi, abs=tolerance)


def test_one_month_keeps_the_forecasts_own_interval() -> None:
    point = _normal(10_000.0, 1_000.0)
    plan = _window_plan(Aggregate.VALUE, JAN)
    result = RuleAnalyzer().analyze(plan, HISTORY, _forecast({A: {JAN: point}}))
    assert [(i.lo, i.hi) for i in result.intervals] == [(point.lo, point.hi)]


def test_without_a_distribution_the_months_bounds_are_used_and_said() -> None:
    pts = {
        JAN: ForecastPoint(10_000.0, 9_000.0, 11_000.0),
        FEB: ForecastPoint(12_000.0, 11_000.0, 13_000.0),
    }
    result = RuleAnalyzer().analyze(
        _window_plan(Aggregate.MEAN), HISTORY, Forecast("m", {A: pts}, 0.8)
    )
    assert [(i.lo, i.hi) for i in result.intervals] == [(10_000.0, 12_000.0)]
    assert "months moving together" in result.uncertainty


# --- scope picks, rankings and ranges -----------------------------------------------------


def test_scope_pick_states_the_exact_probability_and_skips_hopeless_candidates() -> None:
    sd = 300.0
    points = {
        A: {JAN: _normal(10_100.0, sd)},
        B: {JAN: _normal(10_000.0, sd)},
        C: {JAN: _normal(5_000.0, sd)},  # its highest draw is below the others' lowest
        ELSEWHERE: {JAN: _normal(50_000.0, sd)},  # another scope: never a candidate
    }
    plan = _scope_plan(ScopeQuery(ScopeOp.PICK, extreme=Extreme.HIGHEST), (A, B, C, ELSEWHERE))
    result = RuleAnalyzer("point").analyze(plan, HISTORY, _forecast(points))
    assert result.answer == [["Ash"]]
    # P(A > B) for independent normals: Phi(100 / (sd sqrt 2)) (truncation barely matters).
    assert result.probability == pytest.approx(norm.cdf(100 / (sd * math.sqrt(2))), abs=0.03)
    assert "2 of 3 candidates drawn" in result.uncertainty
    assert "probability" in result.text


def test_scope_top_n_probability_of_the_whole_set() -> None:
    points = {
        A: {JAN: _normal(20_000.0, 100.0)},  # surely first
        B: {JAN: _normal(10_000.0, 300.0)},
        C: {JAN: _normal(10_000.0, 300.0)},  # B or C second: a coin flip
        D: {JAN: _normal(1_000.0, 100.0)},  # surely last
    }
    plan = _scope_plan(ScopeQuery(ScopeOp.TOP, extreme=Extreme.HIGHEST, n=2), (A, B, C, D))
    result = RuleAnalyzer("point").analyze(plan, HISTORY, _forecast(points))
    assert result.answer == [["Ash"], ["Birch"]]  # ties go to the first in catalog order
    assert result.probability == pytest.approx(0.5, abs=0.03)
    assert "3 of 4 candidates drawn" in result.uncertainty


def _skewed(point: float) -> ForecastPoint:
    """Point ``point`` but 70% of the mass below 10,000 (inside a range ending there)."""
    qs = np.where(GRID < 0.7, 9_000 + 1_000 * GRID / 0.7, 10_000 + 500 * (GRID - 0.7) / 0.3)
    return ForecastPoint(point, float(qs[9]), float(qs[-10]), tuple(float(v) for v in qs))


def test_scope_range_most_probable_list_can_differ_from_the_point_list() -> None:
    points = {
        A: {JAN: _normal(9_000.0, 50.0)},  # surely inside
        B: {JAN: _skewed(10_050.0)},  # point outside, 70% inside
        C: {JAN: _normal(20_000.0, 50.0)},  # surely outside
    }
    plan = _scope_plan(ScopeQuery(ScopeOp.FILTER, low=8_000.0, high=10_000.0), (A, B, C))
    point = RuleAnalyzer("point").analyze(plan, HISTORY, _forecast(points))
    best = RuleAnalyzer("most-probable").analyze(plan, HISTORY, _forecast(points))
    assert point.answer == [["Ash"]] and point.probability == pytest.approx(0.3, abs=0.03)
    assert best.answer == [["Ash"], ["Birch"]] and best.probability == pytest.approx(0.7, abs=0.03)
    assert "most probable" in best.text and "Ash" in best.text
    assert "1 of 3 candidates drawn" in best.uncertainty


def test_scope_mean_interval_averages_independent_candidates() -> None:
    sd = 1_000.0
    points = {A: {JAN: _normal(10_000.0, sd)}, B: {JAN: _normal(12_000.0, sd)}}
    plan = _scope_plan(ScopeQuery(ScopeOp.MEAN), (A, B))
    result = RuleAnalyzer().analyze(plan, HISTORY, _forecast(points))
    assert result.answer == [[11_000.0]]
    (interval,) = result.intervals
    half = norm.ppf(0.9) * sd / math.sqrt(2)
    tolerance = 3 * _quantile_se(sd / math.sqrt(2))
    assert interval.lo == pytest.approx(11_000 - half, abs=tolerance)
    assert interval.hi == pytest.approx(11_000 + half, abs=tolerance)
    assert f"11,000.00 (80%: {interval.lo:,.0f}–{interval.hi:,.0f})" in result.text
    assert result.probability is None


def test_scope_answers_in_chinese_carry_the_probability_in_chinese() -> None:
    from foretab.core.plan import Language

    points = {A: {JAN: _normal(10_100.0, 300.0)}, B: {JAN: _normal(10_000.0, 300.0)}}
    plan = replace(_scope_plan(ScopeQuery(ScopeOp.PICK), (A, B)), language=Language.ZH)
    result = RuleAnalyzer().analyze(plan, HISTORY, _forecast(points))
    assert "概率" in result.text and result.probability is not None


def test_a_past_scope_answer_has_no_probability() -> None:
    plan = replace(
        _scope_plan(ScopeQuery(ScopeOp.PICK), (A, B)),
        window=TimeWindow(R, R, "now"),
        task=Task.HISTORY,
    )
    result = RuleAnalyzer().analyze(plan, HISTORY, Forecast.nothing_needed())
    assert result.probability is None and result.uncertainty == ""


def test_the_json_answer_carries_intervals_and_the_trace_says_how() -> None:
    from foretab.core.answer import Answer
    from foretab.core.trace import AnalyzeStep, Trace

    points = {A: {JAN: _normal(10_000.0, 1_000.0)}, B: {JAN: _normal(12_000.0, 1_000.0)}}
    plan = _scope_plan(ScopeQuery(ScopeOp.MEAN), (A, B))
    forecast = _forecast(points)
    result = RuleAnalyzer().analyze(plan, HISTORY, forecast)
    answer = Answer(
        "q",
        result.answer,
        result.text,
        plan.task,
        plan,
        Trace((AnalyzeStep("rules", 0.001, result.uncertainty),)),
        HISTORY,
        forecast,
        intervals=result.intervals,
    )
    doc = answer.to_doc()
    assert doc.answer == [[11_000.0]]  # the list keeps its format
    assert [(i.row, i.lo, i.hi) for i in doc.intervals] == [
        (0, round(result.intervals[0].lo, 2), round(result.intervals[0].hi, 2))
    ]
    assert doc.interval_level == 0.8
    assert "scenarios" in (doc.steps[0].uncertainty or "")


def test_named_entities_of_one_group_share_their_shock(monkeypatch: pytest.MonkeyPatch) -> None:
    from foretab.core.plan import Comparison

    monkeypatch.setattr(scenarios, "SHARED_CORRELATION", 0.4)
    flat = tuple(float(v) for v in 9_000 + 2_000 * GRID)  # median = today's 10,000
    points = {ref: {JAN: ForecastPoint(10_000.0, flat[9], flat[-10], flat)} for ref in (A, B)}
    plan = Plan("q", R, (A, B), TimeWindow(JAN, JAN, "next month"), Aggregate.VALUE,
                Task.REASONING, Comparison.WHICH_RISE)  # fmt: skip
    result = RuleAnalyzer("point").analyze(plan, HISTORY, _forecast(points))
    assert result.answer == [["None"]]
    # Neither rises: both normal scores below 0 with correlation 0.4 (independent: 1/4).
    assert result.probability == pytest.approx(0.25 + math.asin(0.4) / (2 * math.pi), abs=0.02)
    assert "shared shock 0.4" in result.uncertainty


def test_a_scope_pick_that_sells_half_the_months_is_right_half_the_time() -> None:
    points = {A: {JAN: _normal(20_000.0, 100.0)}, B: {JAN: _normal(10_000.0, 100.0)}}
    # A is surely the highest price, but sold in 6 of the last 12 months only: it is the
    # answer when it sells in January (the scenarios keep its month half the time).
    history = History({A: {R - k: 20_000.0 for k in range(0, 12, 2)}, B: HISTORY[B]})
    plan = _scope_plan(ScopeQuery(ScopeOp.PICK, extreme=Extreme.HIGHEST), (A, B))
    result = RuleAnalyzer("point").analyze(plan, history, _forecast(points))
    assert result.answer == [["Ash"]]
    assert result.probability == pytest.approx(0.5, abs=0.03)
    assert "2 of 2 candidates drawn" in result.uncertainty  # B may win: it is drawn


def test_tiny_and_near_sure_probabilities_are_not_printed_as_0_or_100() -> None:
    from foretab.analyze.values import percent

    assert [percent(p) for p in (0.0, 0.003, 0.43, 0.996, 1.0)] == [
        "0%", "<1%", "43%", ">99%", "100%",
    ]  # fmt: skip


def test_a_window_interval_holds_the_stated_number_when_point_and_quantiles_disagree() -> None:
    # The point forecast sits above every quantile (separately fitted models can disagree).
    high = _normal(10_000.0, 100.0)
    points = {A: {m: replace(high, value=12_000.0) for m in (JAN, FEB)}}
    result = RuleAnalyzer().analyze(_window_plan(Aggregate.MEAN), HISTORY, _forecast(points))
    assert result.answer == [[12_000.0]]
    (interval,) = result.intervals
    assert interval.lo < 10_000.0 and interval.hi == 12_000.0


def test_entities_of_a_one_level_corpus_are_their_own_group(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from foretab.core.plan import EntityRef

    monkeypatch.setattr(scenarios, "SHARED_CORRELATION", 0.1)
    apple, soft = EntityRef("", "", "AAPL"), EntityRef("", "", "MSFT")
    groups = scenarios.groups_of([apple, soft, A, B])
    assert groups is not None
    assert groups[0] != groups[1]  # no place above them: no shared shock
    assert groups[2] == groups[3] == ("Nanjing", "Jiangning District")


def test_an_analyzer_with_comonotone_months_reproduces_the_months_bounds() -> None:
    from foretab.analyze.scenarios import Copula

    sd = 1_000.0
    points = {A: {JAN: _normal(10_000.0, sd), FEB: _normal(10_000.0, sd)}}
    plan = _window_plan(Aggregate.MEAN)
    result = RuleAnalyzer(copula=Copula(1.0, 0.0)).analyze(plan, HISTORY, _forecast(points))
    (interval,) = result.intervals
    half = norm.ppf(0.9) * sd  # the months' own bounds, averaged
    assert interval.hi == pytest.approx(10_000 + half, abs=3 * _quantile_se(sd))
    assert "correlation 1)" in result.uncertainty
    assert scenarios.copula() == Copula()  # the analyzer's copula does not leak


def test_impossible_correlations_are_refused() -> None:
    from foretab.analyze.scenarios import Copula
    from foretab.errors import QuestionError

    with pytest.raises(QuestionError, match="--shared-correlation"):
        Copula(0.2, 0.5)
