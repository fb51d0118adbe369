"""An independent Python recomputation of a QA item's gold answer from the store panels.

It mirrors the rules of docs/design.md §4 directly (rounded prices, current price = price at R or
the latest before it, exact decimal mean rounded half up, ties to the first project) and
shares no code with the builder's SQL, so agreement means both paths are right.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import pandas as pd

from foretab.bench.qa.templates import TEMPLATES_BY_ID
from foretab.core.months import Month
from foretab.core.plan import (
    Aggregate,
    ChangeMeasure,
    Comparison,
    EntityRef,
    Extreme,
    Metric,
    Task,
)
from foretab.dataset.items import AnswerRows, QAItem

PanelIndex = dict[EntityRef, dict[Month, float]]


def index_panel(panel: pd.DataFrame) -> PanelIndex:
    """``panel`` (city, district, project, month, price) as rounded series per project."""
    index: PanelIndex = {}
    for city, district, project, month, price in panel[
        ["city", "district", "project", "month", "price"]
    ].itertuples(index=False):
        ref = EntityRef(str(city), str(district), str(project))
        index.setdefault(ref, {})[Month.parse(month)] = round(float(price), 2)
    return index


def index_units(corpus: pd.DataFrame) -> PanelIndex:
    """Units sold per project and month, read from the input CSV itself (not the store)."""
    index: PanelIndex = {}
    rows = corpus.dropna(subset=["units_sold"])
    for city, district, project, month, units in rows[
        ["city", "district", "project", "month", "units_sold"]
    ].itertuples(index=False):
        ref = EntityRef(str(city), str(district), str(project))
        index.setdefault(ref, {})[Month.parse(month)] = float(units)
    return index


def reference_units(item: QAItem, units: PanelIndex) -> AnswerRows:
    """Units summed over the item's months that have sales, per project (docs/design.md §4)."""
    months = [Month.parse(m) for m in item.months]
    totals = [
        (ref.name, float(sum(units.get(ref, {}).get(m, 0.0) for m in months)))
        for ref in item.projects
    ]
    if len(totals) == 1:
        return [[totals[0][1]]]
    return [[name, total] for name, total in totals]


def _mean(values: list[float]) -> float:
    exact = sum(Decimal(f"{v:.2f}") for v in values) / len(values)
    return float(exact.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def reference_answer(item: QAItem, history: PanelIndex, future: PanelIndex) -> AnswerRows | None:
    """The answer of ``item`` computed in Python from the indexed history and future panels."""
    template = TEMPLATES_BY_ID[item.template_id]
    if template.metric is Metric.UNITS:
        return None  # the panels hold prices; units items are checked against the engine
    reference = Month.parse(item.reference_month)
    months = [Month.parse(m) for m in item.months]
    multi = len(item.projects) > 1
    targets: list[tuple[str, float, float]] = []  # (project, target, current)
    each: AnswerRows = []
    for ref in item.projects:
        past = history[ref]
        recent = {m: v for m, v in past.items() if reference - 23 <= m <= reference}
        current = recent[max(recent)]
        source = past if template.task is Task.HISTORY else future[ref]
        values = [source[m] for m in months]
        if template.aggregate is Aggregate.MAX:
            target = max(values)
        elif template.aggregate is Aggregate.MIN:
            target = min(values)
        else:
            target = _mean(values)
        targets.append((ref.name, target, current))
        for month, value in zip(months, values, strict=True):
            each.append([ref.name, month.label, value] if multi else [month.label, value])
    comparison = template.comparison
    if template.which_month is not None:
        source = history if template.task is Task.HISTORY else future
        values = [(source[item.projects[0]][m], m) for m in months]
        best = (
            max(v for v, _ in values)
            if template.which_month is Extreme.HIGHEST
            else min(v for v, _ in values)
        )
        return [[next(m for v, m in values if v == best).label]]  # ties: the earliest month
    if template.change is not None:
        _, t, c = targets[0]
        if template.task is Task.HISTORY:
            c, t = history[item.projects[0]][months[0]], history[item.projects[0]][months[-1]]
        moved = t - c
        value = 100 * moved / c if template.change is ChangeMeasure.RELATIVE else moved
        return [[round(value, 2)]]
    if comparison is Comparison.NONE:
        if template.aggregate is Aggregate.EACH:
            return each
        return [[name, t] for name, t, _ in targets] if multi else [[targets[0][1]]]
    if comparison is Comparison.VS_CURRENT:
        _, t, c = targets[0]
        return [["Increase" if t > c else "Decrease" if t < c else "No change"]]

    def change(t: float, c: float) -> float:
        return (t - c) / c if template.measure is ChangeMeasure.RELATIVE else t - c

    names: list[str]
    if comparison is Comparison.WHICH_RISE:
        names = [n for n, t, c in targets if t > c]
    elif comparison is Comparison.WHICH_FALL:
        names = [n for n, t, c in targets if t < c]
    elif comparison is Comparison.RISES_MOST:
        rising = [(change(t, c), n) for n, t, c in targets if change(t, c) > 0]
        best = max((ch for ch, _ in rising), default=None)
        names = [next(n for ch, n in rising if ch == best)] if rising else []
    elif comparison is Comparison.FALLS_MOST:
        falling = [(change(t, c), n) for n, t, c in targets if change(t, c) < 0]
        worst = min((ch for ch, _ in falling), default=None)
        names = [next(n for ch, n in falling if ch == worst)] if falling else []
    elif comparison is Comparison.HIGHEST:
        top = max(t for _, t, _ in targets)
        names = [next(n for n, t, _ in targets if t == top)]
    else:
        low = min(t for _, t, _ in targets)
        names = [next(n for n, t, _ in targets if t == low)]
    return [[n] for n in names] or [["None"]]
