"""Probabilities of reasoning answers from the forecast distribution, and the decision.

A forecast that carries quantiles (``Forecast.grid`` / ``ForecastPoint.quantiles``) is a
predictive distribution per entity and month; ``foretab.analyze.scenarios`` draws
scenarios from it (months of one entity through a Gaussian copula, entities independent
unless a shared shock is set). Each scenario is run through the same rules as the point
answer (``analyze.answer``): the probability of an answer is the share of scenarios that
give it. The *most-probable* decision takes the answer with the highest probability — the
choice that maximises the chance of being exactly right — which need not be the point
forecasts' verdict. Scope answers: ``foretab.analyze.scope_odds``.

Numeric answers get their interval instead. One month's value has the forecast's own
interval; a mean / max / min over several months takes the quantiles of that aggregate
over the same scenarios (so intervals and probabilities share one predictive model;
months up to R are fixed). Without a distribution (interval bounds only) the bounds are
the aggregate of the months' bounds, which assumes the months move together.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from foretab.analyze import scenarios
from foretab.analyze.calibration import how_stated, stated
from foretab.analyze.intervals import with_change_intervals, with_intervals
from foretab.analyze.place_odds import decide_place
from foretab.analyze.scenarios import (
    draw_months,
    draw_targets,
    groups_of,
    has_distribution,
    window_table,
)
from foretab.analyze.scope_odds import decide_scope
from foretab.analyze.units_odds import with_units_intervals
from foretab.analyze.values import percent, probability_text
from foretab.core.months import Month
from foretab.core.plan import (
    Aggregate,
    ChangeMeasure,
    Comparison,
    EntityRef,
    Extreme,
    Language,
    Metric,
    Plan,
)
from foretab.core.series import Forecast, History
from foretab.core.stages import Analysis
from foretab.errors import QuestionError

#: ``point``: the point forecasts' verdict; ``most-probable``: the answer most likely right;
#: ``max-f1``: the answer with the highest expected F1 of its items; ``balanced``: the
#: highest expected mean of the two (exactly right, F1) — ``choose``.
DECISIONS = ("most-probable", "balanced", "max-f1", "point")
#: Chosen on the 2020-12 store's QA set and the QA train split
#: (docs/benchmarks/uncertainty.md, "Decision rules"): the sum of reasoning accuracy and
#: F1 was highest on both (accuracy 0.5 points below most-probable's, F1 1.0–1.4 above).
DEFAULT_DECISION = "balanced"


def check_decision(rule: str | None) -> str:
    """``rule`` if it is a known decision rule (``None``: the default)."""
    rule = rule or DEFAULT_DECISION
    if rule not in DECISIONS:
        raise QuestionError(
            f"unknown decision rule {rule!r}; use one of {', '.join(DECISIONS)} "
            "(e.g. `foretab ask ... --decision point`)"
        )
    return rule


def decide(
    plan: Plan, history: History, forecast: Forecast, point: Analysis, rule: str
) -> Analysis:
    """``point`` (the rules' answer on point forecasts) with intervals or probabilities.

    The analyzer's hook: numeric answers gain their interval in the text; reasoning
    answers gain the probability of the answer given, chosen by ``rule``.
    """
    if not plan.needs_forecast or not forecast.points:
        return point
    if plan.metric is Metric.UNITS:  # the units model: intervals, no distribution
        return with_units_intervals(plan, history, forecast, point)
    if plan.place is not None:
        # A place's probabilities come from its projects' scenarios (no intervals yet).
        return decide_place(plan, history, forecast, point, rule)
    if plan.scopes:
        return decide_scope(plan, history, forecast, point, rule)
    if plan.change is not None:
        return point if plan.is_past else with_change_intervals(plan, history, forecast, point)
    if plan.which_month is not None:
        return _which_month(plan, history, forecast, point, rule) if forecast.grid else point
    if plan.comparison is Comparison.NONE and plan.threshold is None:
        return with_intervals(plan, history, forecast, point)
    if not has_distribution(forecast, plan.entities):
        return point
    outcome = _threshold if plan.threshold is not None else _OUTCOMES.get(plan.comparison)
    if outcome is None:
        return point
    values = _scenario_targets(plan, history, forecast)
    point_targets = _point_targets(plan, history, forecast)
    currents = np.array([_current(plan, ref, history) for ref in plan.entities])
    codes = outcome(plan, values, currents)
    counts = np.bincount(codes, minlength=_n_codes(plan))
    probs = counts / codes.size
    point_code = int(outcome(plan, point_targets[None, :], currents)[0])
    # Decisions read the scenario shares; the words state them calibrated (monotone, so
    # the order of the answers is the same).
    best = choose(plan, probs, point_code, rule)
    zh = plan.language is Language.ZH
    how = f"probability: share of {scenarios.described()} giving the answer, {how_stated(plan)}"
    if best == point_code:
        return _point_kept(plan, point, float(probs[point_code]), zh, rule, how)
    answer = _decode(plan, best)
    other = _plain(_decode(plan, point_code))
    if rule in _SCORED:
        return _overlap_chosen(plan, answer, probs, best, point_code, rule, how)
    p_best, p_point = stated(plan, probs[best]), stated(plan, probs[point_code])
    if zh:
        text = (
            f"{_plain(answer)}（最可能的答案，概率 {percent(p_best)}；仅按点预测为 {other}，"
            f"概率 {percent(p_point)}）。"
        )
    else:
        text = (
            f"{_words(plan, answer)} — the most probable answer ({percent(p_best)}); the "
            f"point forecasts alone give {other} ({percent(p_point)})."
        )
    return Analysis(answer, text, p_best, rule, scenario_share=float(probs[best]), uncertainty=how)


def choose(plan: Plan, probs: np.ndarray, point_code: int, rule: str) -> int:
    """The answer code ``rule`` gives for the distribution ``probs`` over answer codes.

    ``most-probable`` maximises the chance of being exactly right (accuracy); ``max-f1``
    maximises the expected F1 of the answer's items against the outcome's, so for a set
    answer ("which of A, B, C will rise") it may list an entity that rises with a chance
    below one half: listing it costs little when it is wrong and gains when it is right.
    ``balanced`` maximises the expected mean of the two, the benchmark's accuracy and F1
    weighed alike. Each keeps the point forecasts' answer unless another one scores
    strictly higher; for one-item answers all three agree.
    """
    if rule == "point":
        return point_code
    scores = _expected_scores(plan, probs, rule)
    best = int(np.argmax(scores))
    return best if scores[best] > scores[point_code] + 1e-12 else point_code


def _expected_scores(plan: Plan, probs: np.ndarray, rule: str) -> np.ndarray:
    """Per answer code, the expected score ``rule`` maximises under ``probs``."""
    if rule == "most-probable":
        return probs
    f1 = overlap(plan) @ probs
    return f1 if rule == "max-f1" else (probs + f1) / 2


#: The rules that maximise an expected score other than the chance of being exactly right.
_SCORED = {
    "max-f1": ("expected F1", "期望 F1"),
    "balanced": ("expected mean of exactly right and F1", "完全正确与 F1 的期望均值"),
}


def overlap(plan: Plan) -> np.ndarray:
    """``[answer, outcome]``: the F1 of answer code's items against the outcome code's.

    Items as the benchmark scores them (docs/design.md §5): one per answer row, "None" included;
    an answer of one item scores 1 on its own outcome and 0 elsewhere.
    """
    items = [frozenset(str(row[0]) for row in _decode(plan, c)) for c in range(_n_codes(plan))]
    sizes = np.asarray([len(i) for i in items], dtype=float)
    common = np.asarray([[len(a & b) for b in items] for a in items], dtype=float)
    return 2 * common / (sizes[:, None] + sizes[None, :])


def _overlap_chosen(
    plan: Plan,
    answer: list[list[str | float]],
    probs: np.ndarray,
    best: int,
    point_code: int,
    rule: str,
    how: str,
) -> Analysis:
    """The ``max-f1`` / ``balanced`` answer where it differs from the point one."""
    expected = float(_expected_scores(plan, probs, rule)[best])
    score, score_zh = _SCORED[rule]
    other = _plain(_decode(plan, point_code))
    exact = percent(stated(plan, probs[best]))
    kept = percent(stated(plan, probs[point_code]))
    if plan.language is Language.ZH:
        text = (
            f"{_plain(answer)}（期望得分最高的答案：{score_zh} {expected:.2f}，完全正确的概率 "
            f"{exact}；仅按点预测为 {other}，概率 {kept}）。"
        )
    else:
        text = (
            f"{_words(plan, answer)} — the answer with the best expected score ({score} "
            f"{expected:.2f}; exactly right {exact}); the point forecasts alone give {other} "
            f"({kept})."
        )
    return Analysis(
        answer,
        text,
        stated(plan, probs[best]),
        rule,
        scenario_share=float(probs[best]),
        uncertainty=how,
    )


def _point_kept(
    plan: Plan, point: Analysis, share: float, zh: bool, rule: str, how: str
) -> Analysis:
    """The point forecast's answer, with its (calibrated) probability."""
    probability = stated(plan, share)
    text = probability_text(point.text, probability, zh)
    return replace(
        point,
        text=text,
        probability=probability,
        scenario_share=share,
        decision=rule,
        uncertainty=how,
    )


def _which_month(
    plan: Plan, history: History, forecast: Forecast, point: Analysis, rule: str
) -> Analysis:
    """The share of scenarios peaking (or bottoming) in each month of the window."""
    ref = plan.entities[0]
    if not has_distribution(forecast, (ref,)):
        return point
    whole = window_table(plan, (ref,), history, forecast)
    present = whole.present[0]
    months = [m for m, k in zip(plan.window.months, present, strict=True) if k]
    labels = [m.label for m in months]
    if not months or [point.answer[0][0]] != point.answer[0] or point.answer[0][0] not in labels:
        return point
    table = draw_months(whole)[:, 0, present]
    highest = plan.which_month is Extreme.HIGHEST
    codes = (np.argmax if highest else np.argmin)(table, axis=1)  # ties: the earliest
    probs = np.bincount(codes, minlength=len(months)) / codes.size
    point_code = labels.index(str(point.answer[0][0]))
    best = int(np.argmax(probs))
    zh = plan.language is Language.ZH
    how = (
        f"probability: share of {scenarios.described()} peaking or bottoming in that month, "
        f"{how_stated(plan)}"
    )
    if rule == "point" or probs[best] <= probs[point_code]:
        return _point_kept(plan, point, float(probs[point_code]), zh, rule, how)
    chosen, other = months[best], months[point_code]
    p_best, p_point = stated(plan, probs[best]), stated(plan, probs[point_code])
    if zh:
        text = (
            f"{chosen.year}年{chosen.month}月（最可能的答案，概率 {percent(p_best)}；仅按点预测为"
            f"{other.year}年{other.month}月，概率 {percent(p_point)}）。"
        )
    else:
        text = (
            f"{chosen.label} — the most probable month for the {plan.which_month.value} "
            f"{plan.wording.value} of {ref.name} ({percent(p_best)}); the point forecasts "
            f"alone give {other.label} ({percent(p_point)})."
        )
    return Analysis(
        [[chosen.label]], text, p_best, rule, scenario_share=float(probs[best]), uncertainty=how
    )


# --- scenarios ---------------------------------------------------------------------------


def _target_aggregate(plan: Plan) -> Aggregate:
    if plan.aggregate in (Aggregate.MAX, Aggregate.MIN, Aggregate.MEDIAN):
        return plan.aggregate
    return Aggregate.MEAN  # MEAN, and VALUE (one column)


def _scenario_targets(plan: Plan, history: History, forecast: Forecast) -> np.ndarray:
    """``[scenarios, projects]`` window targets (``foretab.analyze.scenarios``)."""
    table = window_table(plan, plan.entities, history, forecast)
    targets = draw_targets(table, _target_aggregate(plan), groups=groups_of(plan.entities))
    # In cents, as the answers' targets are (a held price then equals the current one).
    return np.round(targets, 2)


def _point_targets(plan: Plan, history: History, forecast: Forecast) -> np.ndarray:
    """``[projects]``: the same targets on the point forecasts (rounded as the rules do)."""
    out = np.empty(len(plan.entities))
    for j, ref in enumerate(plan.entities):
        points = forecast.points.get(ref, {})

        def future(month: Month, points: Mapping = points) -> np.ndarray:
            return np.full(1, round(points[month].value, 2))

        out[j] = _aggregate(plan, ref, history, points, future, 1)[0]
    return out


def _aggregate(
    plan: Plan,
    ref: EntityRef,
    history: History,
    points: Mapping[Month, object],
    future: Callable[[Month], np.ndarray],
    n: int,
) -> np.ndarray:
    cols: list[np.ndarray] = []
    observed = history[ref]
    for month in plan.window.months:
        if month > plan.reference_month and month in points:
            cols.append(future(month))
        elif month <= plan.reference_month and month in observed:
            cols.append(np.full(n, round(float(observed[month]), 2)))
    if not cols:
        raise QuestionError(f"{ref.name} has no value in the window to reason about")
    table = np.column_stack(cols)
    if plan.aggregate is Aggregate.MAX:
        return table.max(axis=1)
    if plan.aggregate is Aggregate.MIN:
        return table.min(axis=1)
    if plan.aggregate is Aggregate.MEDIAN:
        return np.median(table, axis=1)
    return table.mean(axis=1)  # MEAN, and VALUE (one column)


def _current(plan: Plan, ref: EntityRef, history: History) -> float:
    past = [m for m in history[ref] if m <= plan.reference_month]
    if not past:
        return float("nan")  # the point analysis has already refused such a question
    return round(float(history[ref][max(past)]), 2)


# --- outcomes: each scenario's answer as an integer code ------------------------------


def _changes(plan: Plan, targets: np.ndarray, currents: np.ndarray) -> np.ndarray:
    delta = targets - currents[None, :]
    if plan.measure is ChangeMeasure.RELATIVE:
        return delta / currents[None, :]
    return delta


def _extreme(plan: Plan, targets: np.ndarray, currents: np.ndarray) -> np.ndarray:
    del currents
    pick = np.argmax if plan.comparison is Comparison.HIGHEST else np.argmin
    return pick(targets, axis=1)  # first index on ties: question order, as the rules


def _vs_current(plan: Plan, targets: np.ndarray, currents: np.ndarray) -> np.ndarray:
    change = _changes(plan, targets, currents)[:, 0]
    return np.where(change > 0, 0, np.where(change < 0, 1, 2))


def _which(plan: Plan, targets: np.ndarray, currents: np.ndarray) -> np.ndarray:
    change = _changes(plan, targets, currents)
    movers = change > 0 if plan.comparison is Comparison.WHICH_RISE else change < 0
    return (movers * (1 << np.arange(movers.shape[1]))[None, :]).sum(axis=1)


def _most(plan: Plan, targets: np.ndarray, currents: np.ndarray) -> np.ndarray:
    change = _changes(plan, targets, currents)
    rising = plan.comparison is Comparison.RISES_MOST
    movers = change > 0 if rising else change < 0
    score = np.where(movers, change if rising else -change, -np.inf)
    best = np.argmax(score, axis=1)
    return np.where(movers.any(axis=1), best, len(plan.entities))  # last code: "None"


def _threshold(plan: Plan, targets: np.ndarray, currents: np.ndarray) -> np.ndarray:
    del currents
    assert plan.threshold is not None
    value = targets[:, 0]
    yes = value > plan.threshold.value if plan.threshold.above else value < plan.threshold.value
    return np.where(yes, 0, 1)


_Outcome = Callable[[Plan, np.ndarray, np.ndarray], np.ndarray]
_OUTCOMES: dict[Comparison, _Outcome] = {
    Comparison.HIGHEST: _extreme,
    Comparison.LOWEST: _extreme,
    Comparison.VS_CURRENT: _vs_current,
    Comparison.WHICH_RISE: _which,
    Comparison.WHICH_FALL: _which,
    Comparison.RISES_MOST: _most,
    Comparison.FALLS_MOST: _most,
}


def _n_codes(plan: Plan) -> int:
    n = len(plan.entities)
    if plan.threshold is not None:
        return 2
    if plan.comparison is Comparison.VS_CURRENT:
        return 3
    if plan.comparison in (Comparison.WHICH_RISE, Comparison.WHICH_FALL):
        return 1 << n
    if plan.comparison in (Comparison.RISES_MOST, Comparison.FALLS_MOST):
        return n + 1
    return n


def _decode(plan: Plan, code: int) -> list[list[str | float]]:
    names = [ref.display_name(plan.language) for ref in plan.entities]
    if plan.threshold is not None:
        return [[("Yes", "No")[code]]]
    if plan.comparison is Comparison.VS_CURRENT:
        return [[("Increase", "Decrease", "No change")[code]]]
    if plan.comparison in (Comparison.WHICH_RISE, Comparison.WHICH_FALL):
        chosen = [[name] for k, name in enumerate(names) if code >> k & 1]
        return chosen or [["None"]]
    if code == len(names):
        return [["None"]]
    return [[names[code]]]


def _plain(answer: Sequence[Sequence[str | float]]) -> str:
    items = [str(row[0]) for row in answer]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _words(plan: Plan, answer: list[list[str | float]]) -> str:
    first, last = plan.window.first.label, plan.window.last.label
    when = f"in {first}" if first == last else f"from {first} to {last}"
    shown = _plain(answer)
    comparison = plan.comparison
    if plan.threshold is not None:
        side = "above" if plan.threshold.above else "below"
        return f"{shown}: is the {plan.wording.value} {when} {side} {plan.threshold.value:,.2f}"
    if comparison is Comparison.VS_CURRENT:
        value = plan.wording.value
        return f"{shown}: the {value} {when} compared with the current {value}"
    if comparison in (Comparison.HIGHEST, Comparison.LOWEST):
        return f"{shown} has the {comparison.value} {plan.wording.value} {when}"
    word = "rise" if comparison in (Comparison.WHICH_RISE, Comparison.RISES_MOST) else "fall"
    most = " the most" if comparison in (Comparison.RISES_MOST, Comparison.FALLS_MOST) else ""
    if shown == "None":
        return f"None of them will {word}{most} {when} compared with now"
    return f"{shown} will {word}{most} {when} compared with now"
