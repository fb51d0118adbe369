"""The families' gold answers recomputed with pandas from the input frame itself.

A third path, sharing no code with the builder's SQL (``foretab.bench.qa.families``) or the
engine (``foretab.sql.scope``, ``foretab.analyze``): docs/design.md §4 read directly — candidates
are the district's projects with a value in the window (future: observed in R−11..R),
a project's value is the exact decimal mean of its rounded prices or its units summed,
ties go to the first project in name order.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal

import pandas as pd

from conftest import REFERENCE, BenchStore
from foretab.bench.qa.family_templates import FAMILY_TEMPLATES_BY_ID, FamilyTemplate
from foretab.core.plan import Extreme, Metric, ScopeOp
from foretab.dataset.items import QAItem, read_items


def _mean(values: list[float]) -> float:
    exact = sum(Decimal(f"{round(v, 2):.2f}") for v in values) / len(values)
    return float(exact.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _scope_answer(
    item: QAItem, template: FamilyTemplate, frame: pd.DataFrame
) -> list[list[object]]:
    place = item.projects[0]
    rows = frame[(frame.city == place.outer) & (frame.district == place.inner)]
    months = set(item.months)
    window = rows[rows.month.isin(months)]
    if min(months) > REFERENCE.iso:  # a future window: projects observed in R-11..R
        recent = rows[(rows.month >= (REFERENCE - 11).iso) & (rows.month <= REFERENCE.iso)]
        window = window[window.project.isin(set(recent.project))]
    values: dict[str, tuple[float | None, float | None, str]] = {}
    for project, group in sorted(window.groupby("project"), key=lambda g: g[0].encode()):
        units = pd.to_numeric(group.units_sold, errors="coerce").dropna()
        name = group.project_zh.iloc[0] if item.language == "zh" else project
        values[project] = (
            _mean(list(group.avg_price)),
            float(units.sum()) if len(units) else None,
            name,
        )
    by = 1 if template.metric is Metric.UNITS else 0
    main = [(p, v[by], v[2]) for p, v in values.items() if v[by] is not None]
    highest = template.extreme is Extreme.HIGHEST
    ranked = sorted(main, key=lambda x: -x[1] if highest else x[1])  # stable: name order
    op = template.op
    if op is ScopeOp.PICK:
        return [[ranked[0][2]]]
    if op is ScopeOp.TOP:
        return [[name] for _, _, name in ranked[: template.n]]
    if op is ScopeOp.FILTER:
        match = re.search(r"between ([\d,]+) and ([\d,]+)|位于(\d+)至(\d+)", item.question)
        assert match, item.question
        lo, hi = (_number(g) for g in match.groups() if g)
        return [[name] for _, v, name in main if lo <= v <= hi]
    if op is ScopeOp.TOP_THEN_PICK:
        by_units = sorted(
            [(p, v[1]) for p, v in values.items() if v[1] is not None], key=lambda x: -x[1]
        )[: template.n]
        top = [(p, values[p][0], values[p][2]) for p, _ in by_units]
        return [[sorted(top, key=lambda x: -x[1] if highest else x[1])[0][2]]]
    if op is ScopeOp.MEAN:
        return [[_mean([v for _, v, _ in main])]]
    if op is ScopeOp.TOTAL:
        return [[float(sum(v for _, v, _ in main))]]
    assert op is ScopeOp.COUNT
    return [[float(sum(1 for v in values.values() if v[1] is not None and v[1] > 0))]]


def _threshold_answer(
    item: QAItem, template: FamilyTemplate, frame: pd.DataFrame
) -> list[list[object]]:
    ref = item.projects[0]
    rows = frame[
        (frame.city == ref.outer) & (frame.district == ref.inner) & (frame.project == ref.name)
    ]
    value = round(float(rows[rows.month == item.months[0]].avg_price.iloc[0]), 2)
    match = re.search(r"(?:above|below|exceed) ([\d,]+)|超过(\d+)", item.question)
    assert match, item.question
    bound = _number(next(g for g in match.groups() if g))
    yes = value > bound if template.above else value < bound
    return [["Yes" if yes else "No"]]


def test_family_gold_agrees_with_a_pandas_reading_of_the_input(bench_store: BenchStore) -> None:
    frame = bench_store.frame
    checked = 0
    for split in ("train", "val", "test"):
        for item in read_items(bench_store.out / f"{split}.jsonl"):
            template = FAMILY_TEMPLATES_BY_ID.get(item.template_id)
            if template is None:
                continue
            if template.is_scope:
                expected = _scope_answer(item, template, frame)
            elif template.above is not None:
                expected = _threshold_answer(item, template, frame)
            else:
                continue  # one-project families: the classic reference covers their SQL
            assert item.answer == expected, (item.question, item.answer, expected)
            checked += 1
    assert checked > 100
