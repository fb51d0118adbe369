"""Intervals of numeric answers about the future (at the forecast's level, default 80%).

* One month's value (VALUE, each row of EACH) has the forecast's own interval.
* A mean / max / min over several months takes the central quantiles of that aggregate
  over the scenarios of ``foretab.analyze.scenarios`` — the draws the probabilities of
  reasoning answers use, so both share one predictive model (months through a Gaussian
  copula; months up to R are fixed at their observed value).
* A forecast without a distribution (interval bounds only) falls back to the aggregate of
  the months' bounds, which assumes the months move together (comonotone); the trace says
  so.
* A change compared with now: the target's interval minus the observed current value
  (scaled by it for a percentage).

Each interval goes in the text after its number, "20,755.68 (80%: 18,811–22,846)", and
in ``Analysis.intervals`` by answer row (``intervals`` in the JSON answer).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from foretab.analyze import scenarios
from foretab.analyze.scenarios import (
    N_SCENARIOS,
    draw_targets,
    has_distribution,
    interval,
    reduce,
    window_table,
)
from foretab.analyze.values import current_value
from foretab.core.months import Month
from foretab.core.plan import Aggregate, ChangeMeasure, EntityRef, Plan
from foretab.core.series import Forecast, History
from foretab.core.stages import Analysis, AnswerInterval

_OWN = "each month's own forecast interval"


def _drawn() -> str:
    return (
        f"a window's aggregate: its quantiles over {N_SCENARIOS:,} scenarios (months through "
        f"a Gaussian copula, correlation {scenarios.copula().months:g})"
    )


_BOUNDS = "a window's aggregate: the months' bounds (no distribution; months moving together)"


def target_interval(
    plan: Plan,
    ref: EntityRef,
    months: Sequence[Month],
    aggregate: Aggregate,
    history: History,
    forecast: Forecast,
) -> tuple[float, float, str] | None:
    """``(lo, hi, how)`` of ``ref``'s target over ``months``; None when nothing is forecast."""
    level = forecast.level
    points = forecast.points.get(ref, {})
    future = [m for m in months if m > plan.reference_month and m in points]
    if level is None or not future or any(points[m].lo is None for m in future):
        return None
    if len(months) == 1:
        p = points[future[0]]
        return float(p.lo), float(p.hi), _OWN  # type: ignore[arg-type]
    if has_distribution(forecast, (ref,)):
        table = window_table(plan, (ref,), history, forecast, months=months)
        lo, hi = interval(draw_targets(table, aggregate)[:, 0], level)
        return lo, hi, _drawn()
    # Comonotone fallback: the aggregate is monotone in each month.
    observed = history[ref]
    present = np.asarray([m in points or m in observed for m in months])
    sides = []
    for side in ("lo", "hi"):
        row = [
            float(getattr(points[m], side))
            if m in future
            else round(float(observed.get(m, 0.0)), 2)
            for m in months
        ]
        sides.append(float(reduce(np.asarray(row), present, aggregate)))
    return sides[0], sides[1], _BOUNDS


def with_intervals(plan: Plan, history: History, forecast: Forecast, point: Analysis) -> Analysis:
    """``point`` with "(80%: lo–hi)" after each forecast value in its text."""
    if forecast.level is None:
        return point
    label = f"{forecast.level:.0%}"
    aggregate = (
        plan.aggregate
        if plan.aggregate in (Aggregate.MAX, Aggregate.MIN, Aggregate.MEDIAN)
        else Aggregate.MEAN
    )
    text, cursor = point.text, 0
    intervals, methods = [], []
    for row, ref, months, value in _numeric_targets(plan, point):
        found = target_interval(plan, ref, months, aggregate, history, forecast)
        if found is None:
            continue
        lo, hi, how = found
        lo, hi = around(value, lo, hi)
        intervals.append(AnswerInterval(row, lo, hi))
        methods.append(how)
        text, cursor = said_with_interval(text, cursor, value, (lo, hi), label, plan)
    return replace(point, text=text, intervals=tuple(intervals), uncertainty=_said(methods))


def said_with_interval(
    text: str, cursor: int, value: float, bounds: tuple[float, float], label: str, plan: Plan
) -> tuple[str, int]:
    """``text`` with "(80%: lo–hi)" after the first ``value`` shown from ``cursor`` on.

    Also returns where to look for the next value; both unchanged when it is not shown.
    """
    shown = f"{value:,.2f}"
    at = text.find(shown, cursor)
    if at < 0:
        return text, cursor
    places = plan.wording.interval_decimals
    lo, hi = bounds
    insert = f"{shown} ({label}: {lo:,.{places}f}–{hi:,.{places}f})"
    return text[:at] + insert + text[at + len(shown) :], at + len(insert)


def with_change_intervals(
    plan: Plan, history: History, forecast: Forecast, point: Analysis
) -> Analysis:
    """A change vs now with the interval of the change: the window target's minus now.

    Now (the current value) is observed, so the change's bounds are the target's shifted
    (and, for a percentage, scaled) by it.
    """
    if forecast.level is None:
        return point
    relative = plan.change is ChangeMeasure.RELATIVE
    aggregate = (
        plan.aggregate
        if plan.aggregate in (Aggregate.MAX, Aggregate.MIN, Aggregate.MEDIAN)
        else Aggregate.MEAN
    )
    text, cursor = point.text, 0
    intervals, methods = [], []
    for row, (ref, cells) in enumerate(zip(plan.entities, point.answer, strict=False)):
        found = target_interval(plan, ref, plan.window.months, aggregate, history, forecast)
        if found is None:
            continue
        base = current_value(plan, ref, history.series)
        if relative and base == 0:
            continue
        lo, hi = (100 * (end - base) / base if relative else end - base for end in found[:2])
        value = float(cells[-1])
        lo, hi = around(value, lo, hi)
        intervals.append(AnswerInterval(row, lo, hi))
        methods.append(found[2])
        shown = f"{value:+.2f}%" if relative else f"{value:+,.2f}"
        at = text.find(shown, cursor)
        if at < 0:
            continue
        spans = f"{lo:+.1f}% to {hi:+.1f}%" if relative else f"{lo:+,.0f} to {hi:+,.0f}"
        insert = f"{shown} ({forecast.level:.0%}: {spans})"
        text = text[:at] + insert + text[at + len(shown) :]
        cursor = at + len(insert)
    how = _said(methods)
    if how:
        how += "; a change: the target's interval against the observed current value"
    return replace(point, text=text, intervals=tuple(intervals), uncertainty=how)


def around(value: float, lo: float, hi: float) -> tuple[float, float]:
    """``(lo, hi)`` stretched to hold the stated ``value``.

    The point forecast and the quantiles are fitted apart and can disagree; the forecast
    source keeps each month's point inside its interval, and so does every aggregate.
    """
    return min(lo, value), max(hi, value)


def _said(methods: Sequence[str]) -> str:
    kinds = list(dict.fromkeys(methods))
    return "intervals: " + "; ".join(kinds) if kinds else ""


def _numeric_targets(
    plan: Plan, point: Analysis
) -> list[tuple[int, EntityRef, list[Month], float]]:
    """(answer row, entity, months the value covers, value) for each number of the answer."""
    several = len(plan.entities) > 1
    by_name = {ref.display_name(plan.language): ref for ref in plan.entities}
    months_by_label = {m.label: m for m in plan.window.months}
    out = []
    for i, row in enumerate(point.answer):
        cells = list(row)
        ref = by_name.get(str(cells.pop(0))) if several else plan.entities[0]
        if ref is None:
            continue
        if plan.aggregate is Aggregate.EACH:
            month = months_by_label.get(str(cells[0]))
            if month is None:
                continue
            out.append((i, ref, [month], float(cells[1])))
        else:
            out.append((i, ref, plan.window.months, float(cells[0])))
    return out
