"""Scope questions: a district or city as a whole (docs/design.md §4, scope table).

Candidates are the plan's projects inside each scope with a value for the metric in the
window (the planner lists, for a future window, the projects observed in R−11..R; the
future source forecast them all). A candidate's value over the window is the MEAN of its
monthly prices or the SUM of its units. Ties go to the first project in catalog order
(city, district, project), so candidates are taken in that order and sorts are stable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from foretab.analyze.values import (
    Series,
    dmean,
    merged,
    r2,
    weighted_mean,
    window_text,
    window_values,
)
from foretab.core.plan import (
    EntityRef,
    Extreme,
    Language,
    Metric,
    Plan,
    ScopeOp,
    ScopeQuery,
    ScopeRef,
)
from foretab.core.series import ScopeOutcome
from foretab.core.stages import Analysis
from foretab.errors import QuestionError

Cell = str | float


def in_scope(scope: ScopeRef, ref: EntityRef) -> bool:
    """True when ``ref`` lies inside ``scope``."""
    return ref.outer == scope.outer and (scope.inner is None or ref.inner == scope.inner)


def scope_values(
    plan: Plan, scope: ScopeRef, metric: Metric, history: Mapping, future: Mapping
) -> list[tuple[EntityRef, float]]:
    """The scope's candidates in catalog order, each with its value over the window."""
    out: list[tuple[EntityRef, float]] = []
    for ref in sorted(r for r in plan.entities if in_scope(scope, r)):
        values = [
            v for _, v in window_values(plan, ref, merged(ref, history, future), strict=False)
        ]
        if values:
            out.append((ref, r2(sum(values)) if metric is Metric.UNITS else dmean(values)))
    return out


def analyze_scope(
    plan: Plan,
    observed: Mapping[EntityRef, Series],
    future: Mapping[EntityRef, Series],
    units: Mapping[EntityRef, Series],
    computed: Sequence[ScopeOutcome] = (),
) -> Analysis:
    """One answer item per scope, in question order (``observed`` holds the plan's metric).

    ``computed``: the outcomes the reader's SQL computed (``foretab.sql.scope``, past
    windows); without them — a future window, or a reader that returned rows (golden
    history, an LLM's SQL) — the same rules run here over the series.
    """
    query = plan.scope
    assert query is not None
    zh = plan.language is Language.ZH
    answer: list[list[Cell]] = []
    parts: list[str] = []
    if computed and len(computed) != len(plan.scopes):
        raise QuestionError(
            f"the scope query answered {len(computed)} of {len(plan.scopes)} scopes; "
            f"ask about one {(plan.wording.groups or ('scope',))[0]} at a time"
        )
    for i, scope in enumerate(plan.scopes):
        where = scope.name_zh if zh and scope.name_zh else scope.label
        outcome = computed[i] if computed else scope_outcome(plan, scope, observed, future, units)
        if query.op is ScopeOp.COUNT:
            n = int(outcome.value or 0)
            answer.append([float(n)])
            parts.append(f"{where}: {n}")
            continue
        if not outcome.candidates:
            raise QuestionError(
                f"no {plan.wording.entity} in {scope.label} has a "
                f"{plan.wording.metric_name(query.metric)} value "
                f"{window_text(plan)}; ask about months with sales"
            )
        if query.op in (ScopeOp.MEAN, ScopeOp.TOTAL, ScopeOp.WEIGHTED):
            value = outcome.value
            assert value is not None
            answer.append([value])
            parts.append(f"{where}: {_shown(query, value)}")
            continue
        if query.op is ScopeOp.EACH:
            rows = [[ref.display_name(plan.language), value] for ref, value in outcome.picked]
            answer.extend(rows)
            listed = ("、" if zh else ", ").join(f"{name} {_shown(query, v)}" for name, v in rows)
            parts.append(f"{where}: {listed}")
            continue
        names = [ref.display_name(plan.language) for ref, _ in outcome.picked]
        if not names and query.op is ScopeOp.FILTER:
            names_text = "无" if zh else "none"
            answer.append(["None"])
        else:
            answer.extend([name] for name in names)
            names_text = "、".join(names) if zh else ", ".join(names)
        parts.append(f"{where}: {names_text}")
    sep = "；" if zh else "; "
    if query.op is ScopeOp.TOTAL and query.combined and len(plan.scopes) > 1:
        return _combined_total(plan, [cell[0] for cell in answer], parts)
    if zh:
        text = f"{window_text(plan)}，{sep.join(parts)}。"
    else:
        text = f"{_what(plan)} {window_text(plan)}: {sep.join(parts)}."
    return Analysis(answer, text)


def _combined_total(plan: Plan, totals: list[Cell], parts: list[str]) -> Analysis:
    """Several scopes' totals as one sum ("in total", 一共), each scope's share in the text.

    Refused where one scope lies inside another ("Nanjing and Jiangning"): its projects
    would be counted twice.
    """
    zh = plan.language is Language.ZH
    for outer in plan.scopes:
        for inner in plan.scopes:
            if inner is not outer and outer.inner is None and inner.outer == outer.outer:
                raise QuestionError(
                    f"{inner.label}在{outer.label}之内，合计会把它的{plan.wording.entity_zh}算两次；"
                    "请只问其中一个"
                    if zh
                    else f"{inner.label} lies inside {outer.label}: a total of both would count "
                    f"its {plan.wording.entities} twice; ask about one of them"
                )
    # the shares as the text shows them (whole units, a forecast's too) add up to the sum
    value = float(sum(round(float(t)) for t in totals))
    shown = f"{value:,.0f}"
    if zh:
        return Analysis([[value]], f"{window_text(plan)}，合计{shown}（{'；'.join(parts)}）。")
    return Analysis(
        [[value]], f"{_what(plan)} {window_text(plan)}, together: {shown} ({'; '.join(parts)})."
    )


def scope_outcome(
    plan: Plan,
    scope: ScopeRef,
    observed: Mapping[EntityRef, Series],
    future: Mapping[EntityRef, Series],
    units: Mapping[EntityRef, Series],
) -> ScopeOutcome:
    """One scope's outcome computed from the series (the rules ``foretab.sql.scope`` runs)."""
    query = plan.scope
    assert query is not None
    by_metric = {Metric.VALUE: (observed, future), Metric.UNITS: (units, {})}
    if plan.metric is Metric.UNITS:  # ``observed`` holds units, ``future`` their forecasts
        by_metric = {Metric.UNITS: (observed, future)}

    def values(metric: Metric) -> list[tuple[EntityRef, float]]:
        return scope_values(plan, scope, metric, *by_metric[metric])

    main = values(query.metric)
    if query.op is ScopeOp.COUNT:
        return ScopeOutcome(len(main), (), float(sum(1 for _, v in values(Metric.UNITS) if v > 0)))
    if not main:
        return ScopeOutcome(0)
    if query.op is ScopeOp.WEIGHTED:
        pairs = [
            (value, units[ref][month])
            for ref, _ in main
            for month, value in window_values(
                plan, ref, merged(ref, observed, future), strict=False
            )
            if units.get(ref, {}).get(month, 0) > 0
        ]
        return ScopeOutcome(len(main), (), weighted_mean(pairs))
    if query.op in (ScopeOp.MEAN, ScopeOp.TOTAL):
        numbers = [v for _, v in main]
        value = r2(sum(numbers)) if query.op is ScopeOp.TOTAL else dmean(numbers)
        return ScopeOutcome(len(main), (), value)
    if query.op is ScopeOp.PICK:
        picked = _ranked(main, query.extreme)[:1]
    elif query.op is ScopeOp.TOP:
        ranking = main if query.rank_by is query.metric else values(query.rank_by)
        picked = _ranked(ranking, query.extreme)[: query.n]
    elif query.op in (ScopeOp.FILTER, ScopeOp.EACH):
        picked = [(ref, v) for ref, v in main if _inside(query, v)]
    elif query.op is ScopeOp.FILTER_THEN_PICK:
        inside = {ref for ref, v in main if _inside(query, v)}
        ranking = [(r, v) for r, v in values(query.rank_by) if r in inside]
        picked = _ranked(ranking, query.extreme)[:1]
    else:  # TOP_THEN_PICK: among the top N by units, the highest / lowest price
        top = {ref for ref, _ in _ranked(values(query.rank_by), Extreme.HIGHEST)[: query.n]}
        picked = _ranked([(r, v) for r, v in main if r in top], query.extreme)[:1]
    return ScopeOutcome(len(main), tuple(picked))


def _inside(query: ScopeQuery, value: float) -> bool:
    return (query.low is None or value >= query.low) and (query.high is None or value <= query.high)


def _ranked(
    items: list[tuple[EntityRef, float]], extreme: Extreme
) -> list[tuple[EntityRef, float]]:
    # sorted() is stable: equal values keep catalog order, so ties go to the first project.
    return sorted(items, key=lambda item: -item[1] if extreme is Extreme.HIGHEST else item[1])


def _what(plan: Plan) -> str:
    query = plan.scope
    assert query is not None
    words = plan.wording
    unit = words.summed if query.metric is Metric.UNITS else words.value
    value, summed, many = words.value, words.summed, words.entities
    return {
        ScopeOp.PICK: f"The {query.extreme.value} {unit} {words.entity}",
        ScopeOp.TOP: f"The top {query.n} by {words.metric_name(query.rank_by)}"
        + (" (ascending)" if query.extreme is Extreme.LOWEST else ""),
        ScopeOp.FILTER: f"{many.capitalize()} in the {value} range",
        ScopeOp.TOP_THEN_PICK: f"Among the top {query.n} by units, the {query.extreme.value} {value}",
        ScopeOp.FILTER_THEN_PICK: f"In the {value} range, the {query.extreme.value} {summed}",
        ScopeOp.MEAN: f"The mean {value} of the {many}",
        ScopeOp.TOTAL: f"Total {summed}",
        ScopeOp.COUNT: f"{many.capitalize()} with sales",
        ScopeOp.EACH: f"The {words.metric_name(query.metric)} of every {words.entity}",
        ScopeOp.WEIGHTED: f"The mean {value} of the {many} weighted by their {summed}",
    }[query.op]


def _shown(query: ScopeQuery, value: float) -> str:
    """A value as the answer's text says it: units sold as whole numbers (a forecast's too)."""
    units = query.metric is Metric.UNITS and query.op is not ScopeOp.WEIGHTED
    return f"{value:,.0f}" if units else f"{value:,.2f}"
