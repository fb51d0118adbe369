"""The meaning check (docs/design.md §4.2): every meaning-changing span is carried by a plan slot.

The passes claim each word of a question; this check is the other half: a claimed word
that changes the meaning — a percent, a change, YoY / MoM, a threshold, a value range,
"how many", "which district", a year or a month — must be consumed by the plan that was
built. A span the plan does not carry would be dropped silently and the answer would
answer another question, so the question is refused instead, naming the span and what was
read. The plan's canonical question (``core.canonical``) then carries every such span.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from foretab.core.canonical import canonical
from foretab.core.months import Month
from foretab.core.plan import (
    Aggregate,
    ChangeMeasure,
    Comparison,
    Metric,
    PlaceOp,
    Plan,
    ScopeOp,
)
from foretab.errors import QuestionError
from foretab.parse.families import (
    COMBINED_EN,
    COMBINED_ZH,
    EVERY_ENTITY_EN,
    EVERY_ENTITY_ZH,
    WEIGHTED_EN,
    WEIGHTED_ZH,
    range_of,
    threshold_of,
)
from foretab.parse.lang import en, zh
from foretab.parse.phrases import PHRASES

_MONTHS_EN = (
    "jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    "sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_MONTH_NUMBER = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
    "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
_MONTH_YEAR_EN = re.compile(rf"\b({_MONTHS_EN})\.?\s+(?:of\s+)?((?:19|20)\d\d)\b")
_MONTH_YEAR_ZH = re.compile(r"((?:19|20)\d\d)\s*年\s*(\d{1,2})\s*月")
# Years a question asks about (2010s–2030s: "above 2000 units" is a value, not a year).
_YEAR = re.compile(r"(?<![\d.,])(20[1-3]\d)(?![\d.,])")

_PERCENT_EN = re.compile(r"\bpercent\w*|%|\bper\s+cent\b")
_PERCENT_ZH = re.compile(r"百分|涨幅|跌幅|增幅|降幅|变化率|变动率|增长率")
_CHANGE_EN = re.compile(r"\bchange[sd]?\b")
_CHANGE_ZH = re.compile(r"变化|变动")
_NEVER = r"(?!)"
_DIFFERENCE_EN = re.compile(
    r"\bhow\s+much\s+(?:more|less|cheaper|pricier|dearer|higher|lower)\b|\bdifference\b"
)
_DIFFERENCE_ZH = re.compile(r"(?:贵|便宜|高|低)了?多少|相差|差多少|差距")
_TOTAL_EN = re.compile(r"\btotal\b")
_MONTH_COUNT_EN = re.compile(r"\b(?:how\s+many|number\s+of)\s+months\b")
_MONTH_COUNT_ZH = re.compile(r"(?:几|多少)个月")
# an ordinal pick ("the second highest"); "the second half", "the second and third
# quarters" are time, read by the time rules
_ORDINAL_EN = re.compile(
    r"\b(?:second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|2nd|3rd|[4-9]th|10th)\b"
    r"(?!\s+(?:and\s+\w+\s+)?(?:half|halves|quarters?)\b)"
)
_ORDINAL_ZH = re.compile(r"第[二三四五六七八九十2-9](?!个?季度|季|半年)")
# A value left in the cue words (names and the plan's time masked) that no bound carries:
# "明年会跌破20000吗" was answered as whether the price falls, the 20000 dropped.
_VALUE = re.compile(
    r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,])"
    r"|(?<![\w.,])(?!20[1-3]\d(?!\d))\d{3,}(?:\.\d+)?(?![\d,])"  # not a year
    r"|\d+(?:\.\d+)?\s*万"
)
# A second time the time rules did not read ("last year and this year": only last year
# was answered); a change against it ("higher than last year") carries it.
_TIME_LEFT_EN = re.compile(r"\b(?:this|last|next)\s+(?:year|month|quarter)\b")
_TIME_LEFT_ZH = re.compile(r"今年|去年|明年|前年|后年|[上下这]个?月|本月")
# A length of time or a calendar edge no time rule read ("after six months", "by year
# end", 年底): the plan fell back to "now" or to another window, so it is refused.
_SPAN_LEFT_EN = re.compile(
    r"(?<!these )(?<!those )(?<!both )(?<!the )"  # "these two months": the months named
    r"\b(?:(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\d{1,2}|a|half\s+a"
    r"|a\s+few|few|several|couple\s+of|a\s+couple\s+of)\s+(?:months?|years?|quarters?|weeks?|days?)"
    r"|year[\s-]+end|end\s+of\s+(?:the\s+)?year|mid[\s-]*year|half[\s-]+year)\b"
)
_SPAN_LEFT_ZH = re.compile(
    r"年底|年末|年中|月底|月末|季度末|(?<![\d〇零一二三四五六七八九十这那此])[一二三四五六七八九十两\d]{1,2}\s*(?:个月|个季度|周|天)"
)
_AVERAGE_EN = re.compile(r"\b(?:average|avg|mean|on\s+average)\b")
_AVERAGE_ZH = re.compile(r"平均|均值|月均")
_HOW_MANY_EN = re.compile(PHRASES.count_en or _NEVER)
_HOW_MANY_ZH = re.compile(PHRASES.entity_count_zh or _NEVER)
_RANKED_INNER_EN = re.compile(PHRASES.ranked_inner_en or _NEVER)


@dataclass(frozen=True, slots=True)
class _Rule:
    """A span kind: its pattern per language and whether a plan consumes it."""

    name: str
    en: re.Pattern[str] | None
    zh: re.Pattern[str] | None
    consumed: Callable[[Plan], bool]


def _relative(plan: Plan) -> bool:
    if plan.place is not None:
        return plan.place.change is ChangeMeasure.RELATIVE
    if plan.change is ChangeMeasure.RELATIVE:
        return True
    return plan.measure is ChangeMeasure.RELATIVE and plan.comparison is not Comparison.NONE


def _change(plan: Plan) -> bool:
    if plan.place is not None:
        return plan.place.op in (PlaceOp.CHANGE, PlaceOp.DIRECTION) or (
            plan.place.op in (PlaceOp.COMPARE, PlaceOp.RANK) and plan.place.change is not None
        )
    return plan.change is not None or plan.comparison is not Comparison.NONE


def _two_months(plan: Plan, gap: int) -> bool:
    months = plan.window.months
    return len(months) == 2 and months[1].minus(months[0]) == gap and _change(plan)


def _count(plan: Plan) -> bool:
    if plan.place is not None:
        return plan.place.op is PlaceOp.COUNT
    return plan.scope is not None and plan.scope.op is ScopeOp.COUNT


def _inner_groups(plan: Plan) -> bool:
    return plan.place is not None and plan.place.op in (
        PlaceOp.RANK,
        PlaceOp.EVERY,
        PlaceOp.COMPARE,
        PlaceOp.VALUE,
    )


def _ranked(plan: Plan) -> bool:
    """Whether "more" / "most" is carried: a comparison, a pick, a ranking, an extreme."""
    if plan.comparison is not Comparison.NONE or plan.which_month is not None:
        return True
    if plan.change is not None or _bounded(plan):
        return True  # "how much more", "more than 500 units"
    if plan.aggregate.value in ("max", "min"):
        return True
    if plan.scope is not None and plan.scope.op in (
        ScopeOp.PICK,
        ScopeOp.TOP,
        ScopeOp.TOP_THEN_PICK,
        ScopeOp.FILTER_THEN_PICK,
    ):
        return True
    return plan.place is not None and plan.place.op in (
        PlaceOp.COMPARE,
        PlaceOp.RANK,
        PlaceOp.WHICH_MONTH,
    )


def _lists_entities(plan: Plan) -> bool:
    """Whether "every project" is carried: the plan answers with the place's projects."""
    if plan.place is not None:
        return plan.place.op is PlaceOp.COUNT
    return plan.scope is not None and plan.scope.op not in (ScopeOp.MEAN, ScopeOp.TOTAL)


def _weighted(plan: Plan) -> bool:
    """Whether "units-weighted" is carried (one project's one month: its price is the answer)."""
    if plan.scope is not None:
        return plan.scope.op is ScopeOp.WEIGHTED
    if plan.place is not None:
        return False
    return plan.aggregate is Aggregate.WEIGHTED or (
        plan.aggregate is Aggregate.VALUE and len(plan.entities) == 1 and plan.change is None
    )


def _subjects(plan: Plan) -> int:
    """How many subjects the plan answers for: its entities, or its places as wholes."""
    return len(plan.scopes) if plan.place is not None else len(plan.entities)


def _difference(plan: Plan) -> bool:
    """Whether "how much cheaper" / "difference" / 贵多少 is carried: one subject's change.

    Between two subjects no plan carries a difference: "How much cheaper is B than A?" was
    answered with each one's change from now to next month.
    """
    return _subjects(plan) <= 1 and _change(plan)


def _units(plan: Plan) -> bool:
    return (plan.scope.metric if plan.scope is not None else plan.metric) is Metric.UNITS


def _total(plan: Plan) -> bool:
    """Whether "total" is carried: units summed (a price has no total)."""
    if plan.scope is not None and plan.scope.op is ScopeOp.TOTAL:
        return True
    return _units(plan) or plan.aggregate is Aggregate.SUM


def _combined(plan: Plan) -> bool:
    """Whether "in total" / "altogether" / 一共 is carried.

    It is by one subject's units summed, or by a total over several places as one sum;
    several projects' totals are each listed, so there it would be dropped.
    """
    if plan.scope is not None:
        return plan.scope.op is ScopeOp.TOTAL and (plan.scope.combined or len(plan.scopes) == 1)
    return _subjects(plan) <= 1 and _total(plan)


def _never(plan: Plan) -> bool:
    """No plan carries it (ordinals, counting months): refused wherever it is read."""
    return False


def _averaged(plan: Plan) -> bool:
    """Whether "average" is carried: a price is an average itself; units sold are summed.

    "What will the average monthly units sold of X be in 2022?" was answered with the
    year's total: the units of a plan are its sum unless it averages them.
    """
    if plan.scope is not None:  # a scope ranks or sums its candidates' totals
        return plan.scope.metric is not Metric.UNITS
    return plan.metric is not Metric.UNITS or plan.aggregate is Aggregate.MEAN


_MORE_EN = re.compile(r"\b(?:more|most)\b(?!\s+than\b)")  # "more than N": the bound's word
# A superlative: "What was the lowest price in Jiangning in 2021?" was answered with the
# district's mean over the year.
_EXTREME_EN = re.compile(
    r"\b(?:highest|lowest|cheapest|priciest|costliest|dearest|most\s+expensive"
    r"|least\s+expensive|maximum|minimum|peak)\b"
)
# "compared with …" (rewritten to "versus"): "How many units did Jiangning sell last month
# compared with the month before?" was answered with last month's total alone.
_VERSUS_EN = re.compile(r"\bversus\b|\bvs\b")
# 最高的项目 "the highest project" without 哪个 was answered with the district's mean.
_MORE_ZH = re.compile(r"[最更较](?:高|低|贵|便宜|多|少|大|小|差|好)")

_RULES = (
    _Rule("percent", _PERCENT_EN, _PERCENT_ZH, _relative),
    _Rule("change", _CHANGE_EN, _CHANGE_ZH, _change),
    _Rule("YoY", en.YOY, zh.YOY, lambda p: _two_months(p, 12)),
    _Rule("MoM", en.MOM, zh.MOM, lambda p: _two_months(p, 1)),
    _Rule("how many", _HOW_MANY_EN, _HOW_MANY_ZH, _count),
    _Rule("group", _RANKED_INNER_EN, zh.INNER_WORD, _inner_groups),
    _Rule("more", _MORE_EN, _MORE_ZH, _ranked),
    _Rule("extreme", _EXTREME_EN, None, _ranked),
    _Rule("median", en.MEDIAN, zh.MEDIAN, lambda p: p.aggregate is Aggregate.MEDIAN),
    _Rule("average", _AVERAGE_EN, _AVERAGE_ZH, _averaged),
    _Rule("difference", _DIFFERENCE_EN, _DIFFERENCE_ZH, _difference),
    _Rule("time", _TIME_LEFT_EN, _TIME_LEFT_ZH, lambda p: _change(p)),
    _Rule("value", _VALUE, _VALUE, lambda p: _bounded(p)),
    _Rule("length of time", _SPAN_LEFT_EN, _SPAN_LEFT_ZH, _never),
    _Rule("total", _TOTAL_EN, None, _total),
    _Rule("combined", COMBINED_EN, COMBINED_ZH, _combined),
    _Rule("months counted", _MONTH_COUNT_EN, _MONTH_COUNT_ZH, _never),
    _Rule("ordinal", _ORDINAL_EN, _ORDINAL_ZH, _never),
    _Rule("every", EVERY_ENTITY_EN, EVERY_ENTITY_ZH, _lists_entities),
    _Rule("weighted", WEIGHTED_EN, WEIGHTED_ZH, _weighted),
)


def _bounded(plan: Plan) -> bool:
    """A threshold or a value range is carried by a plan slot."""
    if plan.threshold is not None:
        return True
    if plan.scope is not None and (plan.scope.low is not None or plan.scope.high is not None):
        return True
    place = plan.place
    return place is not None and (
        place.threshold is not None or place.low is not None or place.high is not None
    )


def check_meaning(plan: Plan, cue_text: str, named_text: str, zh_: bool) -> None:
    """Refuse ``plan`` when a meaning-changing span of the question is not in it.

    ``cue_text``: the question with names and time masked (the cue words); ``named_text``:
    with only the names masked (the time words, for the months asked about).
    """
    for rule in _RULES:
        pattern = rule.zh if zh_ else rule.en
        found = pattern.search(cue_text) if pattern is not None else None
        if found and not rule.consumed(plan):
            _refuse(plan, found.group().strip(), zh_)
    bounds = threshold_of(cue_text, zh_) or range_of(cue_text, zh_)
    if bounds is not None and not _bounded(plan):
        found = re.search(r"\d[\d,.]*\s*(?:万|k\b)?", cue_text)
        _refuse(plan, found.group().strip() if found else "the value range", zh_)
    _check_months(plan, named_text, zh_)
    if not zh_:
        _check_relation(plan, named_text)
        # after the months: "in 2021 compared with 2019" names the year it did not read
        if _VERSUS_EN.search(cue_text) and not (_ranked(plan) or _change(plan)):
            _refuse(plan, "compared with", zh_)


# A word that bounds the time named rather than naming it: "before 2021" was answered for
# 2021, "after June 2021" for June, "until" / "through June 2021" for June alone. (Chinese
# 以前 / 以后 are refused as unread words.)
_RELATION_EN = re.compile(
    r"\b(?:before|after|until|till|through|thru|prior\s+to|up\s+to|earlier\s+than|later\s+than|"
    r"other\s+than|except|excluding|outside)\s*(?:the\s+)?(?:end\s+of\s+|start\s+of\s+)?$"
)


# ... or heads the expression itself: the time rules read "until June" whole, for its month
_RELATION_HEAD_EN = re.compile(r"(?:before|until|till)\b")


def _check_relation(plan: Plan, named_text: str) -> None:
    """Refuse a time expression bounded by "before" / "after" / "until" (not read)."""
    expression = plan.window.expression.strip().lower()
    if not expression:
        return
    at = named_text.lower().find(expression)
    found = _RELATION_EN.search(named_text[:at].lower()) if at > 0 else None
    if found is None:
        found = _RELATION_HEAD_EN.match(expression)
    if found is not None:
        _refuse(plan, found.group().strip(), False)


def _check_months(plan: Plan, text: str, zh_: bool) -> None:
    """Every month and year the question names lies inside the months the plan reads."""
    first, last = plan.window.first, plan.window.last
    if plan.current:
        first = Month(1900, 1)  # "now": the latest month before R may be earlier
    lowered = text.lower()
    if zh_:
        named = [(m.group(), Month(int(m.group(1)), int(m.group(2)))) for m in _MONTH_YEAR_ZH.finditer(text) if 1 <= int(m.group(2)) <= 12]  # fmt: skip
    else:
        named = [
            (m.group(), Month(int(m.group(2)), _MONTH_NUMBER[m.group(1)[:3]]))
            for m in _MONTH_YEAR_EN.finditer(lowered)
        ]
    for span, month in named:
        if not first <= month <= last:
            _refuse_time(plan, span, zh_)
    for m in _YEAR.finditer(lowered):
        year = int(m.group(1))
        if not first.year <= year <= last.year:
            _refuse_time(plan, m.group(), zh_)


def _refuse(plan: Plan, span: str, zh_: bool) -> None:
    read = canonical(plan)
    if zh_:
        raise QuestionError(
            f"问题中的“{span}”没有被计划用上（读成了：{read}），按它回答会答成另一个问题；"
            "请换一种问法，或去掉它后再问"
        )
    raise QuestionError(
        f"the question's '{span}' is not carried by the plan (it was read as: {read}); "
        "answering would answer another question — rephrase it or ask without it"
    )


def _refuse_time(plan: Plan, span: str, zh_: bool) -> None:
    read = canonical(plan)
    if zh_:
        raise QuestionError(
            f"问题中的时间“{span}”不在读出的月份之内（读成了：{read}）；请换一种时间写法再问"
        )
    raise QuestionError(
        f"the question's time '{span}' lies outside the months read (it was read as: {read}); "
        "answering would answer another question — write the time another way "
        "('from January 2019 to December 2021')"
    )
