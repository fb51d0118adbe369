"""Questions about districts and cities as wholes, and YoY / MoM (docs/design.md §3, §4.1).

``place_query_of`` reads, from the cue text of a question that names places but no
projects, the operation asked of the places' own series (``PlaceQuery``): a change, a
direction, a comparison of two places, a ranking of a city's districts, every district of
a city, a count of projects in a value range, a threshold, which month. ``None`` leaves
the question to the project-scope families (the highest project, the mean of the
projects, top N, ...). ``yoy_window`` turns "YoY" / 同比 / "MoM" / 环比 into the two
months compared.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from foretab.core.months import Month
from foretab.core.plan import (
    ChangeMeasure,
    Extreme,
    Metric,
    PlaceOp,
    PlaceQuery,
    ScopeRef,
    Threshold,
    TimeWindow,
    Wording,
)
from foretab.errors import QuestionError
from foretab.parse import vocabulary as vocab
from foretab.parse.families import extreme_of, range_of, threshold_of, top_n_of
from foretab.parse.lang import en, zh
from foretab.parse.phrases import PHRASES

YOY_EN, MOM_EN, YOY_ZH, MOM_ZH = en.YOY, en.MOM, zh.YOY, zh.MOM
_NEVER = r"(?!)"
INNER_WORD_EN, INNER_WORD_ZH = en.INNER_WORD, zh.INNER_WORD
EVERY_EN = re.compile(PHRASES.every_inner_en or _NEVER)
EVERY_ZH = re.compile(PHRASES.every_inner_zh or _NEVER)
N_INNER_EN = re.compile(PHRASES.n_inner_en or _NEVER)
N_INNER_ZH = re.compile(PHRASES.n_inner_zh or _NEVER)
# the same of the outer level, for "which city" (every outer group the subject)
EVERY_OUTER_EN = re.compile(PHRASES.every_outer_en or _NEVER)
EVERY_OUTER_ZH = re.compile(PHRASES.every_outer_zh or _NEVER)
N_OUTER_EN = re.compile(PHRASES.n_outer_en or _NEVER)
N_OUTER_ZH = re.compile(PHRASES.n_outer_zh or _NEVER)
CHANGE_EN = re.compile(
    r"\b(?:change|changed|changes|rise|rose|risen|fall|fell|fallen|increase|increased|"
    r"decrease|decreased|grow|grew|growth|drop|dropped|gain|gained|goes_up|goes_down)\b"
)
CHANGE_ZH = re.compile(r"变化|变动|涨|跌|增长|下降|上升|下跌|上涨|增幅|降幅")
COMPARE_EN = re.compile(r"\bcompare\b|\bcomparison\b")
COMPARE_ZH = re.compile(r"比较|对比")
CHOICE_EN = re.compile(
    r"\bwhich\b|\bwhether\b|\bmore\s+expensive\b|\bless\s+expensive\b|\bpricier\b|\bdearer\b|"
    r"\bcheaper\b|\bhigher\b|\blower\b|\bor\b"
)
CHOICE_ZH = re.compile(r"哪|更高|更低|更贵|更便宜|还是")
# A question about the groups' entities ("which project" / "哪个小区"), not the groups.
ENTITY_WORD_EN = re.compile(PHRASES.entity_word_en or _NEVER)
ENTITY_WORD_ZH = re.compile(PHRASES.entity_word_zh or _NEVER)
ENTITY_COUNT_EN = re.compile(PHRASES.entity_count_en or _NEVER)
ENTITY_COUNT_ZH = re.compile(PHRASES.entity_count_zh or _NEVER)
RESPECTIVELY = re.compile(r"\brespectively\b|\beach\s+of\b|各自|分别")
RISING_EN = re.compile(
    r"\b(?:rise|rises|rose|increase|increases|grow|grows|up|gain|gains|goes_up)\b"
)
FALLING_EN = re.compile(
    r"\b(?:fall|falls|fell|drop|drops|decrease|decreases|down|cheaper|decline|goes_down)\b"
)
FALLING_ZH = re.compile(r"跌|降|下降|下跌|便宜")


@dataclass(frozen=True, slots=True)
class PlaceReading:
    """What ``place_query_of`` read: the query, and the window / places it asks about."""

    query: PlaceQuery
    window: TimeWindow | None
    scopes: tuple[ScopeRef, ...]


def yoy_window(
    text: str, zh_: bool, window: TimeWindow | None, reference: Month
) -> TimeWindow | None:
    """The two months a YoY / MoM question compares (the month named, else R), or None."""
    yoy = (YOY_ZH if zh_ else YOY_EN).search(text)
    mom = (MOM_ZH if zh_ else MOM_EN).search(text)
    if not (yoy or mom):
        return None
    word = (yoy or mom).group() if zh_ else ("YoY" if yoy else "MoM")  # type: ignore[union-attr]
    if window is not None and len(window.months) > 1:
        # Annual means against the year before, or the window's last month? Not guessed.
        if zh_:
            raise QuestionError(
                f"“{word}”比较的是某一个月与{'上年同月' if yoy else '上个月'}；"
                f"“{window.expression}”有多个月，请指明一个月（如 2021年12月{word}）"
            )
        raise QuestionError(
            f"'{word}' compares one month with {'the same month a year earlier' if yoy else 'the month before'}; "
            f"'{window.expression}' spans several months — name one month ('{word} in December 2021')"
        )
    month = window.last if window is not None else reference
    first = month - 12 if yoy else month - 1
    expression = f"{window.expression} {word}".strip() if window else word
    return TimeWindow(first, month, expression, only=(first, month))


def relative(text: str, zh_: bool) -> bool:
    """Percent / rate wording: the change is relative."""
    if zh_:
        return bool(re.search(vocab.RELATIVE_ZH + r"|百分之|百分比|涨幅|跌幅|增幅|降幅", text))
    return bool(en.RELATIVE.search(text) or re.search(r"percent|%", text))


def place_query_of(
    text: str,
    zh_: bool,
    window: TimeWindow | None,
    reference: Month,
    metric: Metric,
    scopes: tuple[ScopeRef, ...],
    children: tuple[ScopeRef, ...],
    *,
    words: Wording,
    every_outer: bool = False,
) -> PlaceReading | None:
    """The place operation of a question naming only places, or None (a scope family).

    ``children``: the inner groups of the one outer group named ("which district of C"),
    or with ``every_outer`` ("which city", no place named) every outer group.
    """
    rel = ChangeMeasure.RELATIVE if relative(text, zh_) else ChangeMeasure.ABSOLUTE
    yoy = yoy_window(text, zh_, window, reference)
    if yoy is not None:
        return PlaceReading(PlaceQuery(PlaceOp.CHANGE, change=rel), yoy, scopes)
    inner_word = (INNER_WORD_ZH if zh_ else INNER_WORD_EN).search(text)
    one_outer = len(scopes) == 1 and scopes[0].inner is None
    change_word = (CHANGE_ZH if zh_ else CHANGE_EN).search(text)
    future = window is None or window.last > reference
    if every_outer and not (inner_word or children):
        return None
    if every_outer and inner_word:
        # "which district of which city": every district of the store is not a subject
        raise _every_inner_of_every_outer(inner_word.group(), zh_, words)
    if ((inner_word and one_outer) or every_outer) and children:
        _refuse_entity_extreme(text, zh_, words)
        every = (EVERY_OUTER_ZH if zh_ else EVERY_OUTER_EN) if every_outer else None
        if (every or (EVERY_ZH if zh_ else EVERY_EN)).search(text):
            return PlaceReading(PlaceQuery(PlaceOp.EVERY, named=True), window, children)
        n = top_n_of(text, zh_) or _count_word(text, zh_, outer=every_outer) or 1
        if change_word and (future or (window is not None and len(window.months) > 1)):
            # "which district of C rose the most": ranked by change, never by price
            falling = (FALLING_ZH if zh_ else FALLING_EN).search(text)
            extreme = Extreme.LOWEST if falling and not _rising(text, zh_) else Extreme.HIGHEST
            op = PlaceOp.COMPARE if n == 1 else PlaceOp.RANK
            query = PlaceQuery(op, change=rel, extreme=extreme, n=n)
            return PlaceReading(query, window or _next(reference), children)
        extreme = extreme_of(text, zh_) or Extreme.HIGHEST
        return PlaceReading(PlaceQuery(PlaceOp.RANK, extreme=extreme, n=n), window, children)
    entities_asked = (ENTITY_WORD_ZH if zh_ else ENTITY_WORD_EN).search(text)
    if len(scopes) > 1 and not RESPECTIVELY.search(text) and not entities_asked:
        if change_word and future and metric is Metric.VALUE and not _ranks(text, zh_):
            # "will A and B rise next year?" asks each place's direction, not a ranking
            return PlaceReading(PlaceQuery(PlaceOp.DIRECTION), window or _next(reference), scopes)
        if change_word and (future or (window is not None and len(window.months) > 1)):
            falling = (FALLING_ZH if zh_ else FALLING_EN).search(text)
            extreme = Extreme.LOWEST if falling and not _rising(text, zh_) else Extreme.HIGHEST
            query = PlaceQuery(PlaceOp.COMPARE, change=rel, extreme=extreme)
            return PlaceReading(query, window, scopes)
        if (COMPARE_ZH if zh_ else COMPARE_EN).search(text):
            return PlaceReading(PlaceQuery(PlaceOp.VALUE, named=True), window, scopes)
        if (CHOICE_ZH if zh_ else CHOICE_EN).search(text):
            extreme = extreme_of(text, zh_) or _choice_extreme(text, zh_)
            return PlaceReading(PlaceQuery(PlaceOp.COMPARE, extreme=extreme), window, scopes)
        if _each_month(text, zh_, window, metric):
            # "A and B each month": was answered with each one's mean over the window
            return PlaceReading(PlaceQuery(PlaceOp.VALUE, each=True), window, scopes)
        return None
    if len(scopes) != 1:
        return None
    count = (ENTITY_COUNT_ZH if zh_ else ENTITY_COUNT_EN).search(text)
    bounds = range_of(text, zh_)
    if count and bounds is not None:
        threshold = threshold_of(text, zh_)
        between = en_between(text) if not zh_ else zh_between(text)
        if threshold is not None and not between:
            return PlaceReading(PlaceQuery(PlaceOp.COUNT, threshold=threshold), window, scopes)
        low, high = bounds
        return PlaceReading(PlaceQuery(PlaceOp.COUNT, low=low, high=high), window, scopes)
    if _which_month(text, zh_) and window is not None and len(window.months) > 1:
        extreme = extreme_of(text, zh_) or Extreme.HIGHEST
        return PlaceReading(PlaceQuery(PlaceOp.WHICH_MONTH, extreme=extreme), window, scopes)
    threshold = threshold_of(text, zh_)
    if threshold is not None and _yes_no(text, zh_) and not count:
        return PlaceReading(PlaceQuery(PlaceOp.THRESHOLD, threshold=threshold), window, scopes)
    if change_word:
        how_much = _how_much(text, zh_)
        if (
            not future
            and window is not None
            and len(window.months) > 1
            and (how_much or rel is ChangeMeasure.RELATIVE)
        ):
            return PlaceReading(PlaceQuery(PlaceOp.CHANGE, change=rel), window, scopes)
        if future and how_much:
            window = window or _next(reference)
            return PlaceReading(PlaceQuery(PlaceOp.CHANGE, change=rel), window, scopes)
        if future and metric is Metric.VALUE:
            return PlaceReading(PlaceQuery(PlaceOp.DIRECTION), window or _next(reference), scopes)
    if _each_month(text, zh_, window, metric):
        return PlaceReading(PlaceQuery(PlaceOp.VALUE, each=True), window, scopes)
    return None


def _each_month(text: str, zh_: bool, window: TimeWindow | None, metric: Metric) -> bool:
    """Whether a price is asked month by month over a window ("each month", 每个月).

    A place's units month by month are refused, naming the words: they were answered with
    the window's total.
    """
    if window is None or len(window.months) < 2:
        return False
    found = zh.EACH.search(text) if zh_ else en.EACH.search(en.WEAK_EACH.sub(" ", text))
    if found is not None and metric is Metric.UNITS:
        word = found.group().strip()
        raise QuestionError(
            f"“{word}”：地区的销量按整个时间段合计回答，不按月分列；请去掉“{word}”，或逐月分别提问"
            if zh_
            else f"'{word}': a place's units sold are answered as the window's total, not month "
            f"by month; ask without '{word}', or ask about one month at a time"
        )
    return found is not None


def _next(reference: Month) -> TimeWindow:
    return TimeWindow(reference + 1, reference + 1, "")


_RANKS_EN = re.compile(
    r"\b(?:more|most|less|least|largest|biggest|bigger|larger|greatest|greater|higher|"
    r"highest|lower|lowest|faster|fastest|which)\b"
)
_RANKS_ZH = re.compile(r"最|更|哪")


def _ranks(text: str, zh_: bool) -> bool:
    """Whether the question ranks places (which / more / most), not asks each one."""
    return bool((_RANKS_ZH if zh_ else _RANKS_EN).search(text))


def _rising(text: str, zh_: bool) -> bool:
    if zh_:
        return bool(re.search(r"涨|上升|增长", text))
    return bool(RISING_EN.search(text))


def _choice_extreme(text: str, zh_: bool) -> Extreme:
    if zh_:
        return Extreme.LOWEST if re.search(r"更低|更便宜|低", text) else Extreme.HIGHEST
    low = re.search(r"\bcheaper\b|\blower\b|\bless\s+expensive\b|\bcheapest\b", text)
    return Extreme.LOWEST if low else Extreme.HIGHEST


# "the mean of its projects" is what a place's value is; without a mean word, "which
# district has the most expensive project" asks for one project's extreme.
_MEAN_EN = re.compile(r"\b(?:average|mean|avg|overall|typical)\b")
_MEAN_ZH = re.compile(r"平均|均值")


def _refuse_entity_extreme(text: str, zh_: bool, words: Wording) -> None:
    """Refuse ranking places by their mean when the question asks for a project's extreme."""
    entity = (ENTITY_WORD_ZH if zh_ else ENTITY_WORD_EN).search(text)
    if entity is None or (_MEAN_ZH if zh_ else _MEAN_EN).search(text):
        return
    word, (inner, outer) = entity.group(), _level_names(words, zh_)
    if zh_:
        value, one = words.value_zh_short, words.entity_zh
        raise QuestionError(
            f"问题中的“{word}”问的是单个{one}（最高或最低的一个，或有几个），而按{inner}或{outer}"
            f"排名比较的是各自所有{one}的平均值；请问“哪个{inner}{words.place_average_zh}最高”，"
            f"或“哪个{one}{value}最高”"
        )
    raise QuestionError(
        f"the question's '{word}' is about the {words.entities} one by one (the highest or "
        f"lowest one, or how many there are), but a ranking of {_plural(words, inner)} or "
        f"{_plural(words, outer)} compares "
        f"each one's mean over its {words.entities}; ask 'which {inner} of … has the highest "
        f"average {words.value}?' or 'which {words.entity} in … has the highest {words.value}?'"
    )


def _every_inner_of_every_outer(inner_word: str, zh_: bool, words: Wording) -> QuestionError:
    inner, outer = _level_names(words, zh_)
    if zh_:
        return QuestionError(
            f"问题中的“{inner_word}”要在所有{outer}的{inner}中排名，暂不支持；请指明{outer}"
        )
    return QuestionError(
        f"the question ranks every {inner} of every {outer}, which is not composed; name the "
        f"{outer} ('which {inner} of … is the highest?')"
    )


def _plural(words: Wording, level: str) -> str:
    plurals = dict(zip(words.groups, words.groups_plural, strict=False))
    return plurals.get(level, f"{level}s")


def _level_names(words: Wording, zh_: bool) -> tuple[str, str]:
    """The inner and outer levels' names ("district", "city"; "区", "城市")."""
    names = (words.groups_zh if zh_ else words.groups) or ("group", "group")
    return names[0], names[1] if len(names) > 1 else names[0]


def _count_word(text: str, zh_: bool, *, outer: bool = False) -> int | None:
    """N of "the two cheapest districts", "三个区" (``outer``: "the three cities", "三个城市")."""
    if outer:
        m = (N_OUTER_ZH if zh_ else N_OUTER_EN).search(text)
    else:
        m = (N_INNER_ZH if zh_ else N_INNER_EN).search(text)
    if not m:
        return None
    word = m.group(1)
    if zh_:
        from foretab.parse.zh_time import zh_number

        return zh_number(word)
    words = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}
    return int(word) if word.isdigit() else words[word]


def en_between(text: str) -> bool:
    return bool(re.search(r"\bbetween\s+[\d,.]+k?\s+and\s+[\d,.]+", text))


def zh_between(text: str) -> bool:
    return bool(re.search(r"\d+\s*(?:万)?\s*(?:至|到|-|~)\s*\d+", text))


def _which_month(text: str, zh_: bool) -> bool:
    if zh_:
        return bool(re.search(r"哪个月|哪一个月|几月|哪月", text))
    return bool(re.search(r"\bwhich\s+month\b|\bwhat\s+month\b|\bin\s+which\s+month\b", text))


def _yes_no(text: str, zh_: bool) -> bool:
    if zh_:
        return bool(re.search(r"吗|是否|有没有", text))
    return bool(_YES_NO_EN.search(text)) or en.is_yes_no(text)


_YES_NO_EN = re.compile(r"^\s*(?:was|were|did|has|had|is|are|will|would|does|do)\b|\bwhether\b")


def _how_much(text: str, zh_: bool) -> bool:
    if zh_:
        return bool(re.search(r"多少|几|幅|率|百分", text))
    return bool(
        re.search(
            r"\bhow\s+much\b|\bby\s+what\b|\bby\s+how\s+much\b|\bwhat\s+(?:was|is|will\s+be)\b|\bpercent|\bchange\b",
            text,
        )
    )


__all__ = ["PlaceReading", "Threshold", "place_query_of", "relative", "yoy_window"]
