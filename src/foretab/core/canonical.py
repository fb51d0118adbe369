"""The plan rendered back as one canonical question (docs/design.md §4.2).

Every answer carries it (trace, ``--json`` field ``canonical``) so a reader sees exactly
what was answered: the subject, the measure, the operation and the time, each from its
plan slot. A word of the question that changed its meaning and is not here was dropped —
that is what the meaning check (``parse.meaning``) refuses before an answer is made.
English by default; place questions asked in Chinese also read in Chinese.
"""

from __future__ import annotations

from foretab.core.plan import (
    Aggregate,
    ChangeMeasure,
    Comparison,
    Extreme,
    Language,
    Metric,
    PlaceOp,
    Plan,
    ScopeOp,
)


def _when(plan: Plan) -> str:
    w = plan.window
    if plan.current:
        return f"now ({plan.reference_month.label})"
    if w.only:
        return "in " + " and ".join(m.label for m in w.months)
    return f"in {w.first.label}" if w.first == w.last else f"from {w.first.label} to {w.last.label}"


def _when_zh(plan: Plan) -> str:
    w = plan.window

    def zm(m: object) -> str:
        return f"{m.year}年{m.month}月"  # type: ignore[attr-defined]

    if w.only:
        return "与".join(zm(m) for m in w.months)
    return zm(w.first) if w.first == w.last else f"{zm(w.first)}至{zm(w.last)}"


def _list(names: list[str], joiner: str = "and") -> str:
    if len(names) <= 2:
        return f" {joiner} ".join(names)
    return ", ".join(names[:-1]) + f" {joiner} " + names[-1]


def _measure(plan: Plan, metric: Metric | None = None) -> str:
    words = plan.wording
    return words.summed if (metric or plan.metric) is Metric.UNITS else words.value


def canonical(plan: Plan) -> str:
    """One question that says exactly what the plan answers."""
    if plan.place is not None:
        if plan.language is Language.ZH:
            return _place_zh(plan)
        return _place(plan)
    if plan.scope is not None:
        return _scope(plan)
    return _entities(plan)


def _place_names(plan: Plan) -> list[str]:
    return [s.label for s in plan.scopes]


def _place(plan: Plan) -> str:
    query = plan.place
    assert query is not None
    units = plan.metric is Metric.UNITS
    what = f"the total {_measure(plan)}" if units else f"the mean {_measure(plan)}"
    places = _place_names(plan)
    when = _when(plan)
    relative = "percent " if query.change is ChangeMeasure.RELATIVE else ""
    op = query.op
    if op is PlaceOp.VALUE:
        each = " each month" if query.each else ""
        return f"{what} of {_list(places)}{each} {when}"
    level, many, of_outer = _ranked_level(plan)
    if op is PlaceOp.EVERY:
        return f"{what} of every {level}{of_outer} {when}"
    if op is PlaceOp.CHANGE:
        if plan.is_past:
            return f"the {relative}change of {what} of {_list(places)} {_from_to(plan)}"
        return f"the {relative}change of {what} of {_list(places)} {when} compared with now"
    if op is PlaceOp.DIRECTION:
        return f"whether {what} of {_list(places)} rises or falls {when} compared with now"
    direction = "highest" if query.extreme is Extreme.HIGHEST else "lowest"
    if op is PlaceOp.COMPARE:
        if query.change is not None:
            move = "rises" if query.extreme is Extreme.HIGHEST else "falls"
            span = _from_to(plan) if plan.is_past else f"{when} compared with now"
            return f"which of {_list(places, 'or')} {move} most ({relative or 'absolute '}change of {what}) {span}"
        return f"which of {_list(places, 'or')} has the {direction} {what[4:]} {when}"
    if op is PlaceOp.RANK:
        if query.n == 1:
            return f"the {level}{of_outer} with the {direction} {what[4:]} {when}"
        top = "top" if query.extreme is Extreme.HIGHEST else "bottom"
        if query.change is not None:
            move = "rise" if query.extreme is Extreme.HIGHEST else "fall"
            span = _from_to(plan) if plan.is_past else f"{when} compared with now"
            return (
                f"the {query.n} {many}{of_outer} whose {what[4:]} {move}s most "
                f"({relative or 'absolute '}change) {span}"
            )
        return f"the {top} {query.n} {many}{of_outer} by {what[4:]} {when}"
    if op is PlaceOp.WHICH_MONTH:
        return f"the month {when} in which {what} of {places[0]} is {direction}"
    if op is PlaceOp.THRESHOLD:
        t = query.threshold
        assert t is not None
        side = "above" if t.above else "below"
        return f"whether {what} of {places[0]} {when} is {side} {t.value:,.0f}"
    # "have a price above 20,000", "have units sold above 50" (a plural measure takes no article)
    article = "" if plan.metric is Metric.UNITS else "a "
    return (
        f"how many {plan.wording.entities} of {_list(places)} have {article}{_measure(plan)} "
        f"{_bounds(query)} {when}"
    )


def every_outer(plan: Plan) -> bool:
    """The subject is every outer group ("which city is the most expensive?")."""
    return len(plan.scopes) > 1 and all(scope.inner is None for scope in plan.scopes)


def _ranked_level(plan: Plan) -> tuple[str, str, str]:
    """The level a ranking or "every" runs over: its name, plural, and " of C" (inner only)."""
    names, plurals = plan.wording.groups or ("group",), plan.wording.groups_plural or ("groups",)
    if every_outer(plan) and len(names) > 1:
        return names[1], plurals[1] if len(plurals) > 1 else f"{names[1]}s", ""
    return names[0], plurals[0], f" of {plan.scopes[0].outer}"


def _bounds(query: object, zh: bool = False) -> str:
    t = getattr(query, "threshold", None)
    low, high = getattr(query, "low", None), getattr(query, "high", None)
    if zh:
        if t is not None:
            return f"{'高于' if t.above else '低于'}{t.value:,.0f}"
        if low is not None and high is not None:
            return f"在{low:,.0f}到{high:,.0f}之间"
        return f"不低于{low:,.0f}" if low is not None else f"不高于{high:,.0f}"
    if t is not None:
        return f"{'above' if t.above else 'below'} {t.value:,.0f}"
    if low is not None and high is not None:
        return f"between {low:,.0f} and {high:,.0f}"
    return f"at least {low:,.0f}" if low is not None else f"at most {high:,.0f}"


def _from_to(plan: Plan) -> str:
    months = plan.window.months
    return f"from {months[0].label} to {months[-1].label}"


def _place_zh(plan: Plan) -> str:
    query = plan.place
    assert query is not None
    units = plan.metric is Metric.UNITS
    what = plan.wording.summed_zh if units else plan.wording.value_zh_short
    places = "、".join(s.name_zh or s.label for s in plan.scopes)
    when = _when_zh(plan)
    relative = "变化率" if query.change is ChangeMeasure.RELATIVE else "变化"
    word = "最高" if query.extreme is Extreme.HIGHEST else "最低"
    op = query.op
    if op is PlaceOp.VALUE:
        return f"{places}{when}{'每个月' if query.each else ''}的{what}"
    names = plan.wording.groups_zh or ("组",)
    outer_level = every_outer(plan) and len(names) > 1
    level, of_outer = (names[1], "") if outer_level else (names[0], plan.scopes[0].outer)
    if op is PlaceOp.EVERY:
        return f"{of_outer}各{level}{when}的{what}"
    if op is PlaceOp.CHANGE:
        return f"{places}{when}{what}的{relative}"
    if op is PlaceOp.DIRECTION:
        return f"{places}{when}{what}与现在相比是涨是跌"
    if op is PlaceOp.COMPARE:
        if query.change is not None:
            return f"{places}中{when}{what}{'涨幅' if query.extreme is Extreme.HIGHEST else '跌幅'}最大的"
        return f"{places}中{when}{what}{word}的"
    if op is PlaceOp.RANK:
        if query.change is not None:
            most = "涨幅" if query.extreme is Extreme.HIGHEST else "跌幅"
            return f"{of_outer}{when}{what}{most}最大的{query.n}个{level}"
        if query.n == 1:
            return f"{when}{what}{word}的{level}"
        return f"{when}{what}{word}的{query.n}个{level}"
    if op is PlaceOp.WHICH_MONTH:
        return f"{places}{when}{what}{word}的月份"
    if op is PlaceOp.THRESHOLD:
        t = query.threshold
        assert t is not None
        return f"{places}{when}的{what}是否{'高于' if t.above else '低于'}{t.value:,.0f}"
    return f"{places}{when}{what}{_bounds(query, zh=True)}的{plan.wording.entity_zh}个数"


def _scope(plan: Plan) -> str:
    query = plan.scope
    assert query is not None
    places = _list([s.label for s in plan.scopes])
    when = _when(plan)
    many = plan.wording.entities
    one = plan.wording.entity
    word = "highest" if query.extreme is Extreme.HIGHEST else "lowest"
    op = query.op
    if op is ScopeOp.PICK:
        return f"the {one} in {places} with the {word} {_measure(plan, query.metric)} {when}"
    if op is ScopeOp.TOP:
        return f"the {query.n} {many} in {places} with the {word} {_measure(plan, query.rank_by)} {when}"
    if op is ScopeOp.FILTER:
        return f"the {many} in {places} with a {_measure(plan)} {_bounds(query)} {when}"
    if op is ScopeOp.TOP_THEN_PICK:
        return f"among the top {query.n} {many} in {places} by {_measure(plan, Metric.UNITS)} {when}, the one with the {word} {_measure(plan, Metric.VALUE)}"
    if op is ScopeOp.FILTER_THEN_PICK:
        return f"among the {many} in {places} with a {_measure(plan, Metric.VALUE)} {_bounds(query)} {when}, the one with the {word} {_measure(plan, Metric.UNITS)}"
    if op is ScopeOp.MEAN:
        return f"the mean {_measure(plan)} of the {many} in {places} {when}"
    if op is ScopeOp.WEIGHTED:
        return f"the mean {_measure(plan)} of the {many} in {places} weighted by their {_measure(plan, Metric.UNITS)} {when}"
    if op is ScopeOp.EACH:
        several = len(plan.window.months) > 1
        how = ("total " if query.metric is Metric.UNITS else "mean ") if several else ""
        return f"the {how}{_measure(plan, query.metric)} of every {one} in {places} {when}"
    if op is ScopeOp.TOTAL:
        together = " together" if query.combined and len(plan.scopes) > 1 else ""
        return f"the total {_measure(plan, Metric.UNITS)} in {places}{together} {when}"
    return f"how many {many} in {places} had sales {when}"


def _entities(plan: Plan) -> str:
    names = [e.name for e in plan.entities]
    subject = _list(names) if len(names) <= 4 else f"{len(names)} {plan.wording.entities}"
    when = _when(plan)
    measure = _measure(plan)
    agg = {
        Aggregate.VALUE: measure,
        Aggregate.MEAN: f"mean {measure}",
        Aggregate.MAX: f"highest {measure}",
        Aggregate.MIN: f"lowest {measure}",
        Aggregate.SUM: f"total {measure}",
        Aggregate.MEDIAN: f"median {measure}",
        Aggregate.WEIGHTED: f"mean {measure} weighted by {_measure(plan, Metric.UNITS)}",
        Aggregate.EACH: f"{measure} each month",
    }[plan.aggregate]
    if plan.which_month is not None:
        word = plan.which_month.value
        return f"the month {when} in which the {measure} of {subject} is {word}"
    if plan.threshold is not None:
        side = "above" if plan.threshold.above else "below"
        return f"whether the {agg} of {subject} {when} is {side} {plan.threshold.value:,.0f}"
    if plan.change is not None:
        relative = "percent " if plan.change is ChangeMeasure.RELATIVE else ""
        if plan.is_past and len(plan.window.months) > 1:
            return f"the {relative}change of the {measure} of {subject} {_from_to(plan)}"
        return f"the {relative}change of the {agg} of {subject} {when} compared with now"
    relative = "percent " if plan.measure is ChangeMeasure.RELATIVE else ""
    comparisons = {
        Comparison.VS_CURRENT: f"whether the {agg} of {subject} {when} rises or falls compared with now",
        Comparison.WHICH_RISE: f"which of {subject} rise {when} compared with now ({agg})",
        Comparison.WHICH_FALL: f"which of {subject} fall {when} compared with now ({agg})",
        Comparison.RISES_MOST: f"which of {subject} rises most ({relative or 'absolute '}change of the {agg}) {when}",
        Comparison.FALLS_MOST: f"which of {subject} falls most ({relative or 'absolute '}change of the {agg}) {when}",
        Comparison.HIGHEST: f"which of {subject} has the highest {agg} {when}",
        Comparison.LOWEST: f"which of {subject} has the lowest {agg} {when}",
    }
    if plan.comparison in comparisons:
        return comparisons[plan.comparison]
    return f"the {agg} of {subject} {when}"
