"""Districts and cities asked about as wholes (docs/design.md §4.1, ``Plan.place``).

A place's value for a month is the plain mean of its candidate projects' rounded values
that month (units sold: their sum). The operation then runs on that series exactly as on
a project's: a window's value is the mean of its monthly values (units: the sum), a past
change is the last month with a value minus the first, a future one (and a direction) the
target minus the value at R (else the latest month before R). Answers hold one item per
place in question order; a ranking lists places.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from foretab.analyze.scope import in_scope
from foretab.analyze.values import Series, dmean, merged, r2, window_text, zh_month
from foretab.core.months import Month
from foretab.core.plan import (
    ChangeMeasure,
    EntityRef,
    Extreme,
    Language,
    Metric,
    PlaceOp,
    PlaceQuery,
    Plan,
    ScopeRef,
)
from foretab.core.stages import Analysis
from foretab.errors import QuestionError

Cell = str | float


def place_name(scope: ScopeRef, language: Language) -> str:
    """A place as answers print it: the district (else the city), Chinese when asked so."""
    if language is Language.ZH and scope.name_zh:
        return scope.name_zh
    return scope.inner or scope.outer


def place_series(
    plan: Plan, scope: ScopeRef, history: Mapping[EntityRef, Series], future: Mapping
) -> dict[Month, float]:
    """The place's monthly values: the mean (units: sum) of its projects' rounded values."""
    by_month: dict[Month, list[float]] = defaultdict(list)
    for ref in plan.entities:
        if in_scope(scope, ref):
            for month, value in merged(ref, history, future).items():
                by_month[month].append(round(float(value), 2))
    if plan.metric is Metric.UNITS:
        return {m: r2(sum(v)) for m, v in sorted(by_month.items())}
    return {m: dmean(v) for m, v in sorted(by_month.items())}


def place_current(plan: Plan, scope: ScopeRef, history: Mapping[EntityRef, Series]) -> float:
    """The place's value now: at R, else the latest month before it (the rules' base)."""
    return _current(plan, scope, place_series(plan, scope, history, {}))


def _window(
    plan: Plan, scope: ScopeRef, series: Mapping[Month, float]
) -> list[tuple[Month, float]]:
    values = [(m, series[m]) for m in plan.window.months if m in series]
    if not values:
        raise QuestionError(
            f"{scope.label} has no {_measure(plan)} recorded {window_text(plan)}; ask about "
            "months with sales"
        )
    return values


def _measure(plan: Plan) -> str:
    return plan.wording.summed if plan.metric is Metric.UNITS else plan.wording.value


def _reduce(plan: Plan, values: list[tuple[Month, float]]) -> float:
    numbers = [v for _, v in values]
    if len(numbers) == 1:
        return numbers[0]
    return r2(sum(numbers)) if plan.metric is Metric.UNITS else dmean(numbers)


def _current(plan: Plan, scope: ScopeRef, series: Mapping[Month, float]) -> float:
    past = [m for m in series if m <= plan.reference_month]
    if not past:
        raise QuestionError(
            f"{scope.label} has no {_measure(plan)} at or before {plan.reference_month.label}"
        )
    return series[max(past)]


def _change(plan: Plan, scope: ScopeRef, series: Mapping[Month, float]) -> tuple[float, float]:
    """(base, end) of the place's change: within a past window, else vs now."""
    values = _window(plan, scope, series)
    if plan.is_past:
        if len(values) < 2:
            raise QuestionError(
                f"{scope.label} has a value in only {len(values)} month(s) "
                f"{window_text(plan)}; a change needs two"
            )
        return values[0][1], values[-1][1]
    return _current(plan, scope, series), _reduce(plan, values)


def _amount(query: PlaceQuery, base: float, end: float) -> float:
    if query.change is ChangeMeasure.RELATIVE:
        if base == 0:
            raise QuestionError("the starting value is 0, so a percentage change is undefined")
        return r2(100 * (end - base) / base)
    return r2(end - base)


def _direction(base: float, end: float) -> str:
    return "Increase" if end > base else "Decrease" if end < base else "No change"


def analyze_place(plan: Plan, history: Mapping, future: Mapping) -> Analysis:
    """The answer of a place question (``plan.place``) from its projects' series."""
    query = plan.place
    assert query is not None
    lang = plan.language
    series = {scope: place_series(plan, scope, history, future) for scope in plan.scopes}
    names = {scope: place_name(scope, lang) for scope in plan.scopes}
    several = len(plan.scopes) > 1
    answer: list[list[Cell]] = []
    parts: list[str] = []
    op = query.op
    if op in (PlaceOp.COMPARE, PlaceOp.RANK):
        scored: list[tuple[ScopeRef, float]] = []
        for scope in plan.scopes:
            try:
                if query.change is not None:
                    base, end = _change(plan, scope, series[scope])
                    scored.append((scope, _amount(query, base, end)))
                else:
                    scored.append((scope, _reduce(plan, _window(plan, scope, series[scope]))))
            except QuestionError:
                if op is PlaceOp.COMPARE:
                    raise
        high = query.extreme is Extreme.HIGHEST
        ranked = sorted(scored, key=lambda item: -item[1] if high else item[1])
        picked = ranked[: query.n]
        if query.change is not None:
            # "which rises most" (and the N rising most): None when none rises (falls
            # most: none falls); a falling place is never listed as rising
            picked = [(s, v) for s, v in picked if (v > 0 if high else v < 0)]
        answer = [[names[s]] for s, _ in picked] or [["None"]]
        parts = [f"{names[s]} {_shown(plan, v)}" for s, v in ranked]
    else:
        # the answer's months are "January 2021" (docs/design.md §4); a Chinese text's 2021年1月
        said = zh_month if lang is Language.ZH else (lambda month: month.label)
        for scope in plan.scopes:
            s, name = series[scope], names[scope]
            if op is PlaceOp.VALUE and query.each:
                for month, value in _window(plan, scope, s):
                    row: list[Cell] = [month.label, value]
                    answer.append([name, *row] if several else row)
                    each = f"{said(month)} {_shown(plan, value)}"  # one place: named once
                    parts.append(f"{name} {each}" if several else each)
            elif op is PlaceOp.VALUE or op is PlaceOp.EVERY:
                value = _reduce(plan, _window(plan, scope, s))
                answer.append([name, value] if (query.named or several) else [value])
                parts.append(f"{name} {_shown(plan, value)}")
            elif op is PlaceOp.CHANGE:
                base, end = _change(plan, scope, s)
                value = _amount(query, base, end)
                answer.append([name, value] if several else [value])
                unit = "%" if query.change is ChangeMeasure.RELATIVE else ""
                parts.append(
                    f"{name} {_shown(plan, value, unit)} ({_shown(plan, base)} → {_shown(plan, end)})"
                )
            elif op is PlaceOp.DIRECTION:
                base, end = _change(plan, scope, s)
                word = _direction(base, end)
                answer.append([name, word] if several else [word])
                if lang is Language.ZH:
                    said = {"Increase": "上涨", "Decrease": "下跌"}.get(word, "持平")
                    parts.append(f"{name}{said}（现在 {_shown(plan, base)} → {_shown(plan, end)}）")
                else:
                    parts.append(
                        f"{name} {word.lower()} ({_shown(plan, base)} now → {_shown(plan, end)})"
                    )
            elif op is PlaceOp.WHICH_MONTH:
                values = _window(plan, scope, s)
                pick = max if query.extreme is Extreme.HIGHEST else min
                month, value = pick(values, key=lambda item: item[1])
                answer.append([month.label])
                parts.append(f"{name} {said(month)} {_shown(plan, value)}")
            elif op is PlaceOp.THRESHOLD:
                t = query.threshold
                assert t is not None
                value = _reduce(plan, _window(plan, scope, s))
                yes = value > t.value if t.above else value < t.value
                answer.append(["Yes" if yes else "No"])
                parts.append(f"{name} {_shown(plan, value)}")
            else:  # COUNT: the place's projects whose window value lies in the range
                n = _count(plan, query, scope, history, future)
                answer.append([name, float(n)] if several else [float(n)])
                parts.append(f"{name} {n}")
    return Analysis(answer, _text(plan, parts))


def _shown(plan: Plan, value: float, unit: str | None = None) -> str:
    """A value as the text says it: units sold as whole numbers; ``unit``: a signed change."""
    if unit == "%":
        return f"{value:+,.2f}%"
    decimals = 0 if plan.metric is Metric.UNITS else 2
    return f"{value:+,.{decimals}f}" if unit is not None else f"{value:,.{decimals}f}"


def _count(
    plan: Plan, query: PlaceQuery, scope: ScopeRef, history: Mapping, future: Mapping
) -> int:
    n = 0
    for ref in plan.entities:
        if not in_scope(scope, ref):
            continue
        s = merged(ref, history, future)
        values = [round(float(s[m]), 2) for m in plan.window.months if m in s]
        if not values:
            continue
        v = r2(sum(values)) if plan.metric is Metric.UNITS else dmean(values)
        t = query.threshold
        if t is not None:
            n += v > t.value if t.above else v < t.value
        else:
            n += (query.low is None or v >= query.low) and (query.high is None or v <= query.high)
    return n


def _text(plan: Plan, parts: list[str]) -> str:
    """The canonical question answered, then each place's figures."""
    from foretab.core.canonical import canonical  # core/canonical imports only core

    if plan.language is Language.ZH:
        return f"{canonical(plan)}：{'；'.join(parts)}。"
    text = canonical(plan)
    return f"{text[:1].upper()}{text[1:]}: {'; '.join(parts)}."
