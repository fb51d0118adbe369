"""Plan + history + future prices → the answer in the ODTQA-FoRe list format (DESIGN §4).

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
* Months print as ``"January 2022"``; projects as their catalog names.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal

from foretab.core.plan import Aggregate, ChangeMeasure, Comparison, Plan, ProjectRef
from foretab.core.series import Forecast, History
from foretab.core.stages import Analysis
from foretab.errors import ForecastError, QuestionError
from foretab.months import Month

Cell = str | float
__all__ = ["Analysis", "RuleAnalyzer", "analyze", "current_price"]
Series = Mapping[Month, float]


def _series(
    ref: ProjectRef,
    history: Mapping[ProjectRef, Series],
    future: Mapping[ProjectRef, Series],
) -> dict[Month, float]:
    merged = dict(history.get(ref, {}))
    merged.update(future.get(ref, {}))
    return merged


def _window_prices(
    plan: Plan, ref: ProjectRef, series: Mapping[Month, float]
) -> list[tuple[Month, float]]:
    prices: list[tuple[Month, float]] = []
    for month in plan.window.months:
        if month in series:
            prices.append((month, round(float(series[month]), 2)))
        elif month > plan.reference_month:
            raise ForecastError(
                f"no forecast for {ref.project} in {month.label}; forecast at least "
                f"{plan.window.last.minus(plan.reference_month)} months past "
                f"{plan.reference_month.label}"
            )
    if not prices:
        raise QuestionError(
            f"{ref.project} ({ref.district}, {ref.city}) has no price "
            f"{_window_text(plan)}; ask about months with sales",
        )
    return prices


def _window_text(plan: Plan) -> str:
    first, last = plan.window.first, plan.window.last
    return f"in {first.label}" if first == last else f"from {first.label} to {last.label}"


def _target(plan: Plan, prices: list[tuple[Month, float]]) -> float:
    values = [value for _, value in prices]
    if plan.aggregate is Aggregate.MEAN:
        # Binary floats make ``round(x, 2)`` of a mean ending in ...5 go either way; the
        # exact decimal mean rounds the same every time, and as the gold SQL does.
        exact = sum(Decimal(f"{v:.2f}") for v in values) / len(values)
        return float(exact.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
    if plan.aggregate is Aggregate.MAX:
        return max(values)
    if plan.aggregate is Aggregate.MIN:
        return min(values)
    if len(values) != 1:
        raise QuestionError(
            f"one value was asked for but the window {_window_text(plan)} holds {len(values)}"
        )
    return values[0]


def current_price(plan: Plan, ref: ProjectRef, history: Mapping[ProjectRef, Series]) -> float:
    """The price at R, else the latest observed month before R, rounded to 2 decimals."""
    series = history.get(ref, {})
    past = [month for month in series if month <= plan.reference_month]
    if not past:
        raise QuestionError(
            f"{ref.project} has no price at or before {plan.reference_month.label}, so there "
            "is no current price to compare with"
        )
    return round(float(series[max(past)]), 2)


def _change(target: float, current: float, measure: ChangeMeasure) -> float:
    if measure is ChangeMeasure.RELATIVE:
        if current == 0:
            raise QuestionError("the current price is 0, so a relative change is undefined")
        return (target - current) / current
    return target - current


def _fmt(value: float) -> str:
    return f"{value:,.2f}"


def _what(plan: Plan) -> str:
    return {
        Aggregate.VALUE: "price",
        Aggregate.MEAN: "mean monthly price",
        Aggregate.MAX: "highest monthly price",
        Aggregate.MIN: "lowest monthly price",
        Aggregate.EACH: "monthly price",
    }[plan.aggregate]


def _names(names: list[str]) -> str:
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def analyze(
    plan: Plan,
    history: Mapping[ProjectRef, Series],
    future: Mapping[ProjectRef, Series],
) -> Analysis:
    """Compute the answer of ``plan`` from history (months ≤ R) and future (months > R)."""
    if not plan.projects:
        raise QuestionError("the plan names no project")
    if plan.comparison is Comparison.NONE:
        return _numeric(plan, history, future)
    return _reasoning(plan, history, future)


def _numeric(
    plan: Plan, history: Mapping[ProjectRef, Series], future: Mapping[ProjectRef, Series]
) -> Analysis:
    verb = "was" if plan.window.last <= plan.reference_month else "will be"
    several = len(plan.projects) > 1
    answer: list[list[Cell]] = []
    parts: list[str] = []
    for ref in plan.projects:
        prices = _window_prices(plan, ref, _series(ref, history, future))
        if plan.aggregate is Aggregate.EACH:
            for month, value in prices:
                row: list[Cell] = [month.label, value]
                answer.append([ref.project, *row] if several else row)
            listed = ", ".join(f"{_fmt(v)} in {m.label}" for m, v in prices)
            parts.append(f"{ref.project}: {listed}" if several else listed)
        else:
            value = _target(plan, prices)
            answer.append([ref.project, value] if several else [value])
            parts.append(f"{ref.project} {_fmt(value)}" if several else _fmt(value))
    if several:
        text = f"The {_what(plan)} {_window_text(plan)} {verb}: {'; '.join(parts)}."
    else:
        ref = plan.projects[0]
        text = f"The {_what(plan)} of {ref.project} {_window_text(plan)} {verb} {parts[0]}."
    return Analysis(answer, text)


def _reasoning(
    plan: Plan, history: Mapping[ProjectRef, Series], future: Mapping[ProjectRef, Series]
) -> Analysis:
    if plan.aggregate is Aggregate.EACH:
        raise QuestionError("a comparison needs one target per project, not one per month")
    targets: list[tuple[ProjectRef, float]] = []
    for ref in plan.projects:
        prices = _window_prices(plan, ref, _series(ref, history, future))
        targets.append((ref, _target(plan, prices)))
    what, when = _what(plan), _window_text(plan)
    comparison = plan.comparison
    if comparison in (Comparison.HIGHEST, Comparison.LOWEST):
        pick = max if comparison is Comparison.HIGHEST else min
        # max/min return the first of equal keys: ties go to the first in question order.
        ref, value = pick(targets, key=lambda item: item[1])
        word = "highest" if comparison is Comparison.HIGHEST else "lowest"
        text = f"{ref.project} has the {word} {what} {when} ({_fmt(value)})."
        return Analysis([[ref.project]], text)
    changes = [
        (ref, target, _change(target, current_price(plan, ref, history), plan.measure))
        for ref, target in targets
    ]
    if comparison is Comparison.VS_CURRENT:
        ref, target, change = changes[0]
        current = current_price(plan, ref, history)
        label = "Increase" if target > current else "Decrease" if target < current else "No change"
        direction = "higher" if label == "Increase" else "lower"
        text = (
            f"{label}: the {what} of {ref.project} {when} ({_fmt(target)}) is {direction} "
            f"than the current price ({_fmt(current)})."
        )
        if label == "No change":
            text = (
                f"The {what} of {ref.project} {when} ({_fmt(target)}) equals the current "
                f"price ({_fmt(current)}): no change."
            )
        return Analysis([[label]], text)
    rising = comparison in (Comparison.WHICH_RISE, Comparison.RISES_MOST)
    movers = [(ref, change) for ref, _, change in changes if (change > 0 if rising else change < 0)]
    word = "rise" if rising else "fall"
    if comparison in (Comparison.WHICH_RISE, Comparison.WHICH_FALL):
        if not movers:
            return Analysis([["None"]], f"None of them will {word} {when} compared with now.")
        names = [ref.project for ref, _ in movers]
        return Analysis(
            [[name] for name in names], f"{_names(names)} will {word} {when} compared with now."
        )
    if not movers:
        return Analysis([["None"]], f"None of them will {word} {when} compared with now.")
    pick = max if rising else min
    ref, change = pick(movers, key=lambda item: item[1])
    amount = f"{change:.2%}" if plan.measure is ChangeMeasure.RELATIVE else _fmt(abs(change))
    return Analysis(
        [[ref.project]],
        f"{ref.project} will {word} the most {when} compared with now ({amount}).",
    )


class RuleAnalyzer:
    """The exact, deterministic analyzer (``foretab.core.stages.Analyzer``)."""

    name = "rules"

    def analyze(self, plan: Plan, history: History, forecast: Forecast) -> Analysis:
        return analyze(plan, history.series, forecast.values())
