"""Plan + history + future prices → the answer in the ODTQA-FoRe list format (docs/design.md §4).

Numeric rule, shared with the dataset builder (both must compute answers this way):

* Every monthly price is rounded first: ``p = round(price, 2)``.
* A target over the window uses the rounded prices of the window's months that have a
  value: VALUE = the month's price; MEAN = the exact decimal mean of the rounded prices,
  rounded half up to 2 decimals (as SQL's ROUND on a DECIMAL does); MAX / MIN =
  ``max(ps)`` / ``min(ps)``. EACH lists every window month with a value. A window month
  that lies after R and has no future value, or a window with no value at all, raises
  ``ForecastError`` (future) or ``QuestionError`` (history) — never a silent guess.
* Current price ``c`` = ``round(price at R, 2)``, else the latest observed month before R
  (history only); none raises ``QuestionError``.
* Vs current: "Increase" if target > c, "Decrease" if target < c, else "No change" (on the
  rounded values). ABSOLUTE change = t − c; RELATIVE change = (t − c) / c (not rounded).
* "which rise / fall": every project with change > 0 (< 0), in question order, or
  ``[["None"]]``. "rises most": the largest change among those > 0 (``[["None"]]`` if
  none rises); "falls most": the most negative change among those < 0. "highest /
  lowest": by target. Ties go to the first project in question order.
* A window entirely at or before R asks about the past: a change there is the value at
  the window's last month with a value minus the value at its first; "which rose more
  during 2021" compares those changes.
* Numeric change: ABSOLUTE ``t − c``; RELATIVE ``100·(t − c)/c``, rounded to 2 decimals.
  Threshold: Yes / No on the target. Which month: the window month with the highest /
  lowest value (ties: the earliest).
* Months print as ``"January 2022"``; projects as their catalog names, Chinese names for a
  Chinese question. Scope questions: ``foretab.analyze.scope``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cache

from foretab.analyze.calibration import ProbabilityCalibration, calibrated_by
from foretab.analyze.places import analyze_place
from foretab.analyze.probability import check_decision, decide
from foretab.analyze.scenarios import Copula, using
from foretab.analyze.scope import analyze_scope
from foretab.analyze.values import (
    Series,
    current_value,
    merged,
    r2,
    target,
    weighted_mean,
    window_text,
    window_values,
    with_assumption,
    zh_month,
)
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
from foretab.core.series import Forecast, History, ScopeOutcome
from foretab.core.stages import Analysis
from foretab.errors import QuestionError

Cell = str | float
__all__ = ["Analysis", "RuleAnalyzer", "analyze", "current_value"]


def _fmt(value: float) -> str:
    return f"{value:,.2f}"


def _what(plan: Plan) -> str:
    words = plan.wording
    if plan.metric is Metric.UNITS:
        if plan.aggregate is Aggregate.MEDIAN:
            return f"median monthly {words.summed}"
        return words.summed if plan.aggregate is not Aggregate.EACH else f"monthly {words.summed}"
    value = words.value_label
    if plan.current:
        return f"current {value}"
    return {
        Aggregate.VALUE: value,
        Aggregate.MEAN: f"mean monthly {value}",
        Aggregate.MAX: f"highest monthly {value}",
        Aggregate.MIN: f"lowest monthly {value}",
        Aggregate.EACH: f"monthly {value}",
        Aggregate.SUM: "total",
        Aggregate.MEDIAN: f"median monthly {value}",
        Aggregate.WEIGHTED: f"mean {value} weighted by {words.summed}",
    }[plan.aggregate]


def _what_zh(plan: Plan) -> str:
    words = plan.wording
    if plan.metric is Metric.UNITS:
        return (
            f"月度{words.summed_zh}中位数"
            if plan.aggregate is Aggregate.MEDIAN
            else words.summed_zh
        )
    return {
        Aggregate.VALUE: words.value_zh,
        Aggregate.MEAN: f"平均{words.value_zh}",
        Aggregate.MAX: f"最高月度{words.value_zh_short}",
        Aggregate.MIN: f"最低月度{words.value_zh_short}",
        Aggregate.EACH: f"每月{words.value_zh}",
        Aggregate.SUM: "合计",
        Aggregate.MEDIAN: f"月度{words.value_zh_short}中位数",
        Aggregate.WEIGHTED: f"按{words.summed_zh}加权的{words.value_zh}",
    }[plan.aggregate]


def _names(names: list[str], zh: bool = False) -> str:
    if zh:
        return "、".join(names)
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def analyze(
    plan: Plan,
    history: Mapping[EntityRef, Series],
    future: Mapping[EntityRef, Series],
    units: Mapping[EntityRef, Series] | None = None,
    scopes: Sequence[ScopeOutcome] = (),
) -> Analysis:
    """Compute the answer of ``plan`` from history (months ≤ R) and future (months > R).

    ``history`` holds the plan's metric; ``units`` the units sold (scope rankings by units);
    ``scopes`` the outcomes a past scope question's SQL computed (``History.scopes``).
    """
    if plan.place is not None:
        return with_assumption(plan, analyze_place(plan, history, future))
    if plan.scopes:
        return with_assumption(plan, analyze_scope(plan, history, future, units or {}, scopes))
    if not plan.entities:
        raise QuestionError(f"the plan names no {plan.wording.entity}")
    if plan.aggregate is Aggregate.WEIGHTED:
        return with_assumption(plan, _weighted(plan, history, units or {}))
    if plan.which_month is not None:
        result = _which_month(plan, history, future)
    elif plan.threshold is not None:
        result = _threshold(plan, history, future)
    elif plan.change is not None:
        result = _numeric_change(plan, history, future)
    elif plan.comparison is Comparison.NONE:
        result = _numeric(plan, history, future)
    else:
        result = _reasoning(plan, history, future)
    return with_assumption(plan, result)


def _values(
    plan: Plan, ref: EntityRef, history: Mapping, future: Mapping
) -> list[tuple[Month, float]]:
    if plan.current and plan.reference_month not in history.get(ref, {}):
        past = [m for m in history.get(ref, {}) if m <= plan.reference_month]
        if past:
            return [(max(past), round(float(history[ref][max(past)]), 2))]
    return window_values(plan, ref, merged(ref, history, future))


def _weighted(
    plan: Plan, history: Mapping[EntityRef, Series], units: Mapping[EntityRef, Series]
) -> Analysis:
    """Each project's window price weighted by its units sold (past months: parse refuses others)."""
    several = len(plan.entities) > 1
    answer: list[list[Cell]] = []
    parts: list[str] = []
    for ref in plan.entities:
        pairs = [
            (value, units[ref][month])
            for month, value in _values(plan, ref, history, {})
            if units.get(ref, {}).get(month, 0) > 0
        ]
        value = weighted_mean(pairs)
        name = ref.display_name(plan.language)
        answer.append([name, value] if several else [value])
        parts.append(f"{name} {_fmt(value)}" if several else _fmt(value))
    if plan.language is Language.ZH:
        names = _names([r.display_name(plan.language) for r in plan.entities], zh=True)
        text = f"{names}{window_text(plan)}的{_what_zh(plan)}：{'；'.join(parts)}。"
    else:
        names = _names([r.name for r in plan.entities], zh=False)
        text = f"The {_what(plan)} of {names} {window_text(plan)}: {'; '.join(parts)}."
    return Analysis(answer, text)


def _numeric(
    plan: Plan, history: Mapping[EntityRef, Series], future: Mapping[EntityRef, Series]
) -> Analysis:
    zh = plan.language is Language.ZH
    verb = "was" if plan.is_past else "will be"
    several = len(plan.entities) > 1
    answer: list[list[Cell]] = []
    parts: list[str] = []
    for ref in plan.entities:
        name = ref.display_name(plan.language)
        values = _values(plan, ref, history, future)
        if plan.aggregate is Aggregate.EACH:
            for month, value in values:
                row: list[Cell] = [month.label, value]
                answer.append([name, *row] if several else row)
            shown = (lambda v: f"{v:,.0f}") if plan.metric is Metric.UNITS else _fmt
            if zh:
                listed = "，".join(f"{zh_month(m)} {shown(v)}" for m, v in values)
            else:
                listed = ", ".join(f"{shown(v)} in {m.label}" for m, v in values)
            parts.append(f"{name}: {listed}" if several else listed)
        else:
            value = target(plan.aggregate, values, plan)
            answer.append([name, value] if several else [value])
            # Units read as whole numbers (a forecast's 53.4 as 53), except a past median's .5.
            whole = plan.metric is Metric.UNITS and (
                plan.aggregate is not Aggregate.MEDIAN or value == int(value)
            )
            shown = f"{value:,.0f}" if whole else _fmt(value)
            parts.append(f"{name} {shown}" if several else shown)
    if zh:
        names = _names([r.display_name(plan.language) for r in plan.entities], zh=True)
        text = f"{names}{window_text(plan)}的{_what_zh(plan)}：{'；'.join(parts)}。"
    elif several:
        text = f"The {_what(plan)} {window_text(plan)} {verb}: {'; '.join(parts)}."
    else:
        ref = plan.entities[0]
        text = f"The {_what(plan)} of {ref.name} {window_text(plan)} {verb} {parts[0]}."
    return Analysis(answer, text)


def _change_of(
    plan: Plan, ref: EntityRef, history: Mapping, future: Mapping
) -> tuple[float, float, float]:
    """(base, target, change): within the window for the past, vs current for the future."""
    values = _values(plan, ref, history, future)
    if plan.is_past and len(plan.window.months) > 1:
        if len(values) < 2:
            raise QuestionError(
                f"{ref.name} has a value in only {len(values)} month(s) {window_text(plan)}; "
                "a change needs two"
            )
        base, end = values[0][1], values[-1][1]
    else:
        base = current_value(plan, ref, history)
        end = target(
            Aggregate.MEAN if plan.aggregate is Aggregate.EACH else plan.aggregate, values, plan
        )
    return base, end, end - base


def _relative(base: float, change: float) -> float:
    if base == 0:
        raise QuestionError("the starting value is 0, so a percentage change is undefined")
    return change / base


def _numeric_change(plan: Plan, history: Mapping, future: Mapping) -> Analysis:
    relative = plan.change is ChangeMeasure.RELATIVE
    answer: list[list[Cell]] = []
    parts: list[str] = []
    for ref in plan.entities:
        base, end, change = _change_of(plan, ref, history, future)
        value = r2(100 * _relative(base, change)) if relative else r2(change)
        answer.append(
            [ref.display_name(plan.language), value] if len(plan.entities) > 1 else [value]
        )
        shown = f"{value:+.2f}%" if relative else f"{value:+,.2f}"
        parts.append(f"{ref.display_name(plan.language)} {shown} ({_fmt(base)} → {_fmt(end)})")
    if plan.language is Language.ZH:
        return Analysis(answer, f"{window_text(plan)}的变化：{'；'.join(parts)}。")
    base_word = "within the window" if plan.is_past else "compared with now"
    return Analysis(answer, f"Change {window_text(plan)} {base_word}: {'; '.join(parts)}.")


def _which_month(plan: Plan, history: Mapping, future: Mapping) -> Analysis:
    ref = plan.entities[0]
    values = _values(plan, ref, history, future)
    pick = max if plan.which_month is Extreme.HIGHEST else min
    month, value = pick(values, key=lambda item: item[1])  # ties: the earliest month
    if plan.language is Language.ZH:
        word = "最高" if plan.which_month is Extreme.HIGHEST else "最低"
        text = f"{ref.display_name(plan.language)}在{window_text(plan)}中{month.year}年{month.month}月{word}（{_fmt(value)}）。"
    else:
        text = (
            f"{ref.name} has its {plan.which_month.value} {_what(plan)} "
            f"{window_text(plan)} in {month.label} ({_fmt(value)})."
        )
    return Analysis([[month.label]], text)


def _threshold(plan: Plan, history: Mapping, future: Mapping) -> Analysis:
    ref = plan.entities[0]
    threshold = plan.threshold
    assert threshold is not None
    aggregate = Aggregate.MEAN if plan.aggregate is Aggregate.EACH else plan.aggregate
    if plan.metric is Metric.UNITS and aggregate not in (Aggregate.VALUE, Aggregate.MEDIAN):
        aggregate = Aggregate.SUM
    value = target(aggregate, _values(plan, ref, history, future), plan)
    yes = value > threshold.value if threshold.above else value < threshold.value
    label = "Yes" if yes else "No"
    if plan.language is Language.ZH:
        word = "高于" if threshold.above else "低于"
        text = f"{'是' if yes else '否'}：{ref.display_name(plan.language)}{window_text(plan)}的{_what_zh(plan)}为{_fmt(value)}，{'' if yes else '不'}{word}{_fmt(threshold.value)}。"
    else:
        word = "above" if threshold.above else "below"
        text = (
            f"{label}: the {_what(plan)} of {ref.name} {window_text(plan)} is {_fmt(value)}, "
            f"{'' if yes else 'not '}{word} {_fmt(threshold.value)}."
        )
    return Analysis([[label]], text)


def _reasoning(
    plan: Plan, history: Mapping[EntityRef, Series], future: Mapping[EntityRef, Series]
) -> Analysis:
    zh = plan.language is Language.ZH
    if plan.aggregate is Aggregate.EACH:
        raise QuestionError(
            f"a comparison needs one target per {plan.wording.entity}, not one per month"
        )
    what, when = _what(plan), window_text(plan)
    comparison = plan.comparison
    if comparison in (Comparison.HIGHEST, Comparison.LOWEST):
        aggregate = plan.aggregate
        if plan.metric is Metric.UNITS and aggregate not in (Aggregate.VALUE, Aggregate.MEDIAN):
            aggregate = Aggregate.SUM
        targets = [
            (ref, target(aggregate, _values(plan, ref, history, future), plan))
            for ref in plan.entities
        ]
        pick = max if comparison is Comparison.HIGHEST else min
        # max/min return the first of equal keys: ties go to the first in question order.
        ref, value = pick(targets, key=lambda item: item[1])
        name = ref.display_name(plan.language)
        if zh:
            word = "最高" if comparison is Comparison.HIGHEST else "最低"
            return Analysis([[name]], f"{when}{name}的{_what_zh(plan)}{word}（{_fmt(value)}）。")
        word = "highest" if comparison is Comparison.HIGHEST else "lowest"
        return Analysis([[name]], f"{name} has the {word} {what} {when} ({_fmt(value)}).")
    changes = [(ref, *_change_of(plan, ref, history, future)) for ref in plan.entities]
    past = plan.is_past and len(plan.window.months) > 1
    if comparison is Comparison.VS_CURRENT:
        ref, base, end, change = changes[0]
        label = "Increase" if change > 0 else "Decrease" if change < 0 else "No change"
        if zh:
            word = {"Increase": "上涨", "Decrease": "下跌", "No change": "持平"}[label]
            return Analysis(
                [[label]],
                f"{ref.display_name(plan.language)}{when}{word}：{_fmt(base)} → {_fmt(end)}。",
            )
        if past:
            text = f"{label}: {ref.name} went from {_fmt(base)} to {_fmt(end)} {when}."
        elif label == "No change":
            text = (
                f"The {what} of {ref.name} {when} ({_fmt(end)}) equals the current "
                f"{plan.wording.value} ({_fmt(base)}): no change."
            )
        else:
            direction = "higher" if label == "Increase" else "lower"
            text = (
                f"{label}: the {what} of {ref.name} {when} ({_fmt(end)}) is {direction} "
                f"than the current {plan.wording.value} ({_fmt(base)})."
            )
        return Analysis([[label]], text)
    relative = plan.measure is ChangeMeasure.RELATIVE
    scored = [
        (ref, _relative(base, change) if relative else change) for ref, base, _, change in changes
    ]
    rising = comparison in (Comparison.WHICH_RISE, Comparison.RISES_MOST)
    movers = [(ref, c) for ref, c in scored if (c > 0 if rising else c < 0)]
    word = "rise" if rising else "fall"
    tense = ("rose" if rising else "fell") if past else f"will {word}"
    since = "" if past else " compared with now"
    none = "均未上涨" if rising else "均未下跌"
    if comparison in (Comparison.WHICH_RISE, Comparison.WHICH_FALL):
        if not movers:
            text = f"{when}{none}。" if zh else f"None of them {tense} {when}{since}."
            return Analysis([["None"]], text)
        names = [ref.display_name(plan.language) for ref, _ in movers]
        zh_word = "上涨" if rising else "下跌"
        text = (
            f"{when}{_names(names, True)}{zh_word}。"
            if zh
            else f"{_names(names)} {tense} {when}{since}."
        )
        return Analysis([[name] for name in names], text)
    if not movers:
        text = f"{when}{none}。" if zh else f"None of them {tense} {when}{since}."
        return Analysis([["None"]], text)
    pick = max if rising else min
    ref, change = pick(movers, key=lambda item: item[1])
    amount = f"{change:.2%}" if relative else _fmt(abs(change))
    name = ref.display_name(plan.language)
    if zh:
        return Analysis([[name]], f"{when}{name}{'涨幅' if rising else '跌幅'}最大（{amount}）。")
    return Analysis([[name]], f"{name} {tense} the most {when}{since} ({amount}).")


class RuleAnalyzer:
    """The exact, deterministic analyzer (``foretab.core.stages.Analyzer``).

    ``decision``: how a reasoning answer is chosen when the forecast has a distribution
    (``foretab.analyze.probability.DECISIONS``); ``copula``: the
    scenarios' correlations (``foretab.analyze.scenarios``; None: the defaults).
    """

    name = "rules"

    def __init__(
        self,
        decision: str | None = None,
        copula: Copula | None = None,
        calibration: Callable[[], ProbabilityCalibration | None] | None = None,
    ) -> None:
        self.decision = check_decision(decision)
        self.copula = copula
        # Read on the first answer that needs it (most questions state no probability).
        self._calibration = cache(calibration) if calibration is not None else None

    def analyze(self, plan: Plan, history: History, forecast: Forecast) -> Analysis:
        point = analyze(plan, history.series, forecast.values(), history.units, history.scopes)
        # Hook (issue 11): intervals in numeric texts, probabilities and the decision
        # rule for reasoning answers; lives in its own module. Stated probabilities go
        # through the store's calibration (issue 30), when it has one.
        calibration = self._calibration() if self._calibration and plan.needs_forecast else None
        with using(self.copula), calibrated_by(calibration):
            return decide(plan, history, forecast, point, self.decision)
