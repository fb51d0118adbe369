"""Probabilities of answers about districts and cities as wholes (issue 30, item 4).

A place's value for a month is the plain mean of its projects' values (docs/design.md
§4.1), so a scenario of the place is the mean of its projects' scenarios that month
(``scenarios.draw_place_means``; projects of one district share a shock, so a district's
mean is not made falsely sure by averaging independent errors). Each scenario is run
through the place rule — rise or fall against the place's value now, which place rises
(falls) most, which is highest, above a value — and the probability of an answer is the
share of scenarios giving it.

Future windows only (a window that starts after R): a window spanning R mixes observed
months whose place mean counts other projects. Rankings of several places (top N) keep
the point answer without a probability. A rise / fall or above / below answer follows
the decision rule (the most probable answer, as for a project); "which place rises most"
keeps the point forecasts' answer and adds its probability.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from foretab.analyze import scenarios
from foretab.analyze.calibration import how_stated, stated
from foretab.analyze.places import place_current, place_name
from foretab.analyze.scenarios import (
    N_SCENARIOS,
    draw_place_means,
    groups_of,
    has_distribution,
    window_table,
)
from foretab.analyze.scope import in_scope
from foretab.analyze.values import percent, probability_text
from foretab.core.plan import (
    ChangeMeasure,
    Extreme,
    Language,
    Metric,
    PlaceOp,
    Plan,
)
from foretab.core.series import Forecast, History
from foretab.core.stages import Analysis

#: About this many (scenario, project, month) cells are drawn, never fewer than
#: ``MIN_SCENARIOS`` scenarios (a probability's Monte Carlo error then ≤ 1.6 points).
SCENARIO_CELLS = 2_000_000
MIN_SCENARIOS = 1_000
_WORDS = ("Increase", "Decrease", "No change")
_WORDS_ZH = {"Increase": "上涨", "Decrease": "下跌", "No change": "持平"}
_ODDS = (PlaceOp.DIRECTION, PlaceOp.COMPARE, PlaceOp.THRESHOLD)


def decide_place(
    plan: Plan, history: History, forecast: Forecast, point: Analysis, rule: str
) -> Analysis:
    """``point`` (the place rules on point forecasts) with the probability of its answer."""
    query = plan.place
    assert query is not None
    if query.op not in _ODDS or plan.metric is not Metric.VALUE:
        return point
    if plan.window.first <= plan.reference_month:
        return point
    refs = [r for r in plan.entities if any(in_scope(s, r) for s in plan.scopes)]
    if not refs or not has_distribution(forecast, refs):
        return point
    table = window_table(plan, refs, history, forecast)
    place_of = np.asarray(
        [next(k for k, s in enumerate(plan.scopes) if in_scope(s, r)) for r in refs]
    )
    cells = max(1, len(refs) * len(plan.window.months))
    n = int(np.clip(SCENARIO_CELLS // cells, MIN_SCENARIOS, N_SCENARIOS))
    means = draw_place_means(
        table, place_of, len(plan.scopes), n=n, groups=groups_of(refs)
    )  # [n, places, months]
    with np.errstate(invalid="ignore"):
        targets = np.round(np.nanmean(means, axis=2), 2)  # a window's value: its months' mean
    if np.isnan(targets).any():
        return point  # a place without a forecast month: the rules have said why
    bases = np.asarray([place_current(plan, s, history.series) for s in plan.scopes])
    codes, labels = _outcomes(plan, targets, bases)
    probs = np.bincount(codes, minlength=len(labels)) / codes.size
    point_code = labels.index(_key(point.answer)) if _key(point.answer) in labels else None
    if point_code is None:
        return point
    # Rise / fall and above / below follow the decision rule as a project's do (one
    # place: every rule takes the most probable answer). "Which place rises most" keeps
    # the point answer: the place scenarios' spread has not been checked on a hold-out
    # (docs/calibration.md), and a most probable district that the point forecasts see
    # falling would read as wrong.
    best = point_code
    follows_rule = rule != "point" and query.op in (PlaceOp.DIRECTION, PlaceOp.THRESHOLD)
    if follows_rule and probs.max() > probs[point_code]:
        best = int(np.argmax(probs))
    how = (
        f"probability: share of {scenarios.described(n)} of the places' mean "
        f"(each entity drawn, a shared shock within each group), {how_stated(plan)}"
    )
    zh = plan.language is Language.ZH
    share = float(probs[point_code])
    p_point = stated(plan, share)
    if best == point_code:
        text = probability_text(point.text, p_point, zh)
        return replace(
            point,
            text=text,
            probability=p_point,
            scenario_share=share,
            decision=rule if query.op is not PlaceOp.COMPARE else "point",
            uncertainty=how,
        )
    p_best = stated(plan, float(probs[best]))
    chosen, other = _plain(labels[best], zh), _plain(labels[point_code], zh)
    if zh:
        text = (
            f"{point.text.rstrip('。')}。最可能的答案：{chosen}（概率 {percent(p_best)}）；"
            f"仅按点预测为{other}（概率 {percent(p_point)}）。"
        )
    else:
        text = (
            f"{point.text.rstrip('.')}. The most probable answer: {chosen} ({percent(p_best)}); "
            f"the point forecasts alone give {other} ({percent(p_point)})."
        )
    answer: list[list[str | float]] = [list(row) for row in labels[best]]
    return Analysis(answer, text, p_best, rule, scenario_share=float(probs[best]), uncertainty=how)


Label = tuple[tuple[str, ...], ...]


def _key(answer: list[list[str | float]]) -> Label:
    return tuple(tuple(str(c) for c in row) for row in answer)


def _outcomes(plan: Plan, targets: np.ndarray, bases: np.ndarray) -> tuple[np.ndarray, list[Label]]:
    """Each scenario's answer as a code into the list of possible answers (as the rules)."""
    query = plan.place
    assert query is not None
    names = [place_name(s, plan.language) for s in plan.scopes]
    several = len(plan.scopes) > 1
    if query.op is PlaceOp.THRESHOLD:
        t = query.threshold
        assert t is not None
        yes = targets[:, 0] > t.value if t.above else targets[:, 0] < t.value
        return np.where(yes, 0, 1), [(("Yes",),), (("No",),)]
    if query.op is PlaceOp.DIRECTION:
        word = np.where(targets > bases, 0, np.where(targets < bases, 1, 2))  # [n, places]
        # One code per combination of the places' words (3 ** places of them).
        codes = (word * (3 ** np.arange(len(names)))[None, :]).sum(axis=1)
        labels: list[Label] = []
        for code in range(3 ** len(names)):
            words = [_WORDS[code // 3**k % 3] for k in range(len(names))]
            labels.append(
                tuple((name, w) for name, w in zip(names, words, strict=True))
                if several
                else ((words[0],),)
            )
        return codes, labels
    high = query.extreme is Extreme.HIGHEST
    if query.change is None:
        pick = np.argmax if high else np.argmin
        return pick(targets, axis=1), [((name,),) for name in names]
    change = targets - bases[None, :]
    if query.change is ChangeMeasure.RELATIVE:
        change = np.round(100 * change / bases[None, :], 2)
    movers = change > 0 if high else change < 0
    score = np.where(movers, change if high else -change, -np.inf)
    codes = np.where(movers.any(axis=1), np.argmax(score, axis=1), len(names))
    return codes, [*(((name,),) for name in names), (("None",),)]


def _plain(label: Label, zh: bool) -> str:
    """An answer in words: "Decrease", "Tianhe District Increase; Huangpu District …"."""
    rows = [
        ("" if zh else " ").join(_WORDS_ZH.get(c, c) if zh else c for c in row) for row in label
    ]
    return ("；" if zh else "; ").join(rows)
