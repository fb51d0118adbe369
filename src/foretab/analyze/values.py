"""The numeric rules every answer is computed with (shared by project and scope questions).

* Every monthly value is rounded first: ``p = round(value, 2)``.
* A target over the window uses the rounded values of the window's months that have one:
  VALUE = the month's value; MEAN = the exact decimal mean, rounded half up to 2 decimals
  (as SQL's ROUND on a DECIMAL does); MAX / MIN; SUM (units sold over the window). A window
  month after R without a future value, or a window with no value at all, raises
  ``ForecastError`` (future) or ``QuestionError`` (history) — never a silent guess.
* Current value ``c`` = the value at R, else the latest observed month before R.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from decimal import ROUND_HALF_UP, Decimal

from foretab.core.months import Month
from foretab.core.plan import Aggregate, EntityRef, Language, Metric, Plan
from foretab.core.stages import Analysis
from foretab.errors import ForecastError, QuestionError

Series = Mapping[Month, float]


def dmean(values: list[float]) -> float:
    """Exact decimal mean of 2-decimal values, rounded half up (binary floats would not)."""
    exact = sum(Decimal(f"{v:.2f}") for v in values) / len(values)
    return float(exact.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def dmedian(values: list[float]) -> float:
    """Exact decimal median of 2-decimal values (the two middle ones' mean), rounded half up."""
    ordered = sorted(Decimal(f"{v:.2f}") for v in values)
    middle = len(ordered) // 2
    exact = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    return float(exact.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def weighted_mean(pairs: list[tuple[float, float]]) -> float:
    """Σ value·weight / Σ weight of 2-decimal values, exact in decimals, rounded half up."""
    total = sum(Decimal(repr(w)) for _, w in pairs)
    if not total:
        raise QuestionError(
            "the weights sum to nothing in the window: there is no weighted mean to give"
        )
    exact = sum(Decimal(f"{v:.2f}") * Decimal(repr(w)) for v, w in pairs) / total
    return float(exact.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def r2(value: float) -> float:
    """Round half up to 2 decimals."""
    return float(Decimal(repr(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)) + 0.0


def merged(
    ref: EntityRef, history: Mapping[EntityRef, Series], future: Mapping[EntityRef, Series]
) -> dict[Month, float]:
    """History and future values of one entity in one series."""
    out = dict(history.get(ref, {}))
    out.update(future.get(ref, {}))
    return out


def window_text(plan: Plan) -> str:
    """The window in words, in the question's language."""
    first, last = plan.window.first, plan.window.last
    if plan.language is Language.ZH:
        return zh_month(first) if first == last else f"{zh_month(first)}至{zh_month(last)}"
    if plan.window.only:
        return "in " + ", ".join(m.label for m in plan.window.months)
    return f"in {first.label}" if first == last else f"from {first.label} to {last.label}"


def zh_month(month: Month) -> str:
    """``2022年1月``."""
    return f"{month.year}年{month.month}月"


def window_values(
    plan: Plan, ref: EntityRef, series: Mapping[Month, float], *, strict: bool = True
) -> list[tuple[Month, float]]:
    """The rounded values of the window's months that have one (see the module rules)."""
    values: list[tuple[Month, float]] = []
    for month in plan.window.months:
        if month in series:
            values.append((month, round(float(series[month]), 2)))
        elif month > plan.reference_month and strict:
            raise ForecastError(
                f"no forecast for {ref.name} in {month.label}; forecast at least "
                f"{plan.window.last.minus(plan.reference_month)} months past "
                f"{plan.reference_month.label}"
            )
    if not values and strict:
        what = plan.wording.summed if plan.metric is Metric.UNITS else plan.wording.value
        raise QuestionError(
            f"{ref.name} ({ref.inner}, {ref.outer}) has no {what} recorded "
            f"{window_text(plan)}; ask about months with sales "
            f"(`foretab projects --db DB --search TEXT` shows its months)"
        )
    return values


def target(aggregate: Aggregate, values: list[tuple[Month, float]], plan: Plan) -> float:
    """The window's values reduced by ``aggregate``."""
    numbers = [v for _, v in values]
    if aggregate is Aggregate.MEAN:
        return dmean(numbers)
    if aggregate is Aggregate.SUM:
        return r2(sum(numbers))
    if aggregate is Aggregate.MAX:
        return max(numbers)
    if aggregate is Aggregate.MIN:
        return min(numbers)
    if aggregate is Aggregate.MEDIAN and numbers:
        return dmedian(numbers)
    if len(numbers) != 1:
        raise QuestionError(
            f"one value was asked for but the window {window_text(plan)} holds {len(numbers)}"
        )
    return numbers[0]


def current_value(plan: Plan, ref: EntityRef, history: Mapping[EntityRef, Series]) -> float:
    """The value at R, else the latest observed month before R, rounded to 2 decimals."""
    series = history.get(ref, {})
    past = [month for month in series if month <= plan.reference_month]
    if not past:
        raise QuestionError(
            f"{ref.name} has no {plan.wording.value} at or before "
            f"{plan.reference_month.label}, so there is no current {plan.wording.value} to "
            "compare with"
        )
    return round(float(series[max(past)]), 2)


def with_assumption(plan: Plan, result: Analysis) -> Analysis:
    """``result`` with the planner's assumption ("no time given: now") in its text."""
    if not plan.assumption:
        return result
    if plan.language is Language.ZH:
        return replace(result, text=f"{result.text}（{plan.assumption}）")
    return replace(result, text=f"{result.text} ({plan.assumption})")


def percent(probability: float) -> str:
    """A stated probability in words: "43%", and "<1%" / ">99%" rather than a flat 0 or 100."""
    if 0 < probability < 0.005:
        return "<1%"
    if 0.995 <= probability < 1:
        return ">99%"
    return f"{probability:.0%}"


def probability_text(text: str, probability: float, zh: bool) -> str:
    """``text`` followed by the probability of its answer under the forecast distribution."""
    p = percent(probability)
    if zh:
        return text.rstrip("。") + f"（按预测分布，概率 {p}）。"
    return text.rstrip(".") + f"; probability {p} from the forecast distribution."
