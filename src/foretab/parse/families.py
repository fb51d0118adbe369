"""Family cues beyond the comparison and aggregate words of ``parser``.

The metric (price or units), a numeric change, which-month, thresholds, and what a scope
question asks — in English and Chinese. Each reader takes the cue text (entities and time masked) and
returns a typed value or None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from foretab.core.plan import ChangeMeasure, Extreme, Metric, ScopeOp, ScopeQuery, Threshold
from foretab.errors import QuestionError
from foretab.parse.phrases import PHRASES
from foretab.parse.vocabulary import measure_words
from foretab.parse.zh_time import NUM as ZH_NUM
from foretab.parse.zh_time import zh_number

_EN_NUMBERS = {w: i for i, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"])}  # fmt: skip
_EN_N = r"(?:\d{1,3}|" + "|".join(_EN_NUMBERS) + r")"
_AMOUNT = r"(?:rmb|cny|¥|yuan)?\s*(?P<v>\d[\d,]*(?:\.\d+)?)\s*(?P<k>k\b|thousand\b)?"

# -- English ------------------------------------------------------------------------------

_UNITS_EN = re.compile(measure_words(Metric.UNITS).en)
_VALUE_EN = re.compile(measure_words(Metric.VALUE).en)
_CHANGE_EN = re.compile(PHRASES.change_en)
# "…: increase, decrease or stay the same?" asks for a direction, not an amount.
_CHOICE_EN = re.compile(
    r"\bor\s+(?:stay|remain|decrease|fall|drop|go\s+down|goes_down|rise|increase|go\s+up"
    r"|goes_up|not)\b|\bstay\s+the\s+same\b|\bup\s+or\s+down\b"
)
_WHICH_MONTH_EN = re.compile(
    r"\b(?:which|what)\s+month\b|\bin\s+which\s+month\b|\bwhen\b(?=.*\b(?:highest|lowest|peak"
    r"|pricier|priciest|cheapest|cheaper|maximum|minimum|most|least|top|bottom)\b)"
)
_ABOVE_EN = r"(?:above|over|exceed|exceeds|exceeding|more\s+than|higher\s+than|greater\s+than|pricier\s+than|costlier\s+than|dearer\s+than|at\s+least|surpass|surpasses|beyond|hit|hits|reach|reaches|break|breaks|cross|crosses)"
_BELOW_EN = (
    r"(?:below|under|less\s+than|lower\s+than|cheaper\s+than|beneath|at\s+most|fewer\s+than)"
)
_THRESHOLD_EN = re.compile(rf"\b(?P<dir>{_ABOVE_EN}|{_BELOW_EN})\s+(?:the\s+)?{_AMOUNT}")
_BETWEEN_EN = re.compile(
    rf"\bbetween\s+{_AMOUNT.replace('?P<v>', '?P<a>').replace('?P<k>', '?P<ka>')}\s*(?:and|-|to)\s*"
    rf"{_AMOUNT.replace('?P<v>', '?P<b>').replace('?P<k>', '?P<kb>')}"
    rf"|\bfrom\s+{_AMOUNT.replace('?P<v>', '?P<c>').replace('?P<k>', '?P<kc>')}\s*to\s*"
    rf"{_AMOUNT.replace('?P<v>', '?P<d>').replace('?P<k>', '?P<kd>')}"
)
_TOP_N_EN = re.compile(
    rf"\btop\s+(?P<a>{_EN_N})\b|\b(?:the\s+)?(?P<b>{_EN_N})\s+(?:most|least|cheapest|priciest"
    rf"|highest|lowest|best|worst|top|biggest|largest|pricier|cheaper|costliest|dearest"
    rf"|leading|bestselling|best-selling)\b|\b(?P<c>{_EN_N})\s+(?:{PHRASES.top_n_nouns_en}|ones)\b"
)
_COUNT_EN = re.compile(PHRASES.count_en)
EVERY_ENTITY_EN = re.compile(PHRASES.every_entity_en or r"(?!)")
EVERY_ENTITY_ZH = re.compile(PHRASES.every_entity_zh or r"(?!)")
# Several subjects summed into one: "how many units did A and B sell in total", 一共.
COMBINED_EN = re.compile(
    r"\b(?:in\s+total|altogether|all\s+together|combined|together|in\s+all|between\s+them)\b"
)
COMBINED_ZH = re.compile(r"一共|总共|合计|共计|总计|加起来|合起来|加在一起")
_COMBINED_TOTAL_EN = re.compile(rf"{COMBINED_EN.pattern}|\bacross\b")
WEIGHTED_EN = re.compile(PHRASES.weighted_en or r"(?!)")
WEIGHTED_ZH = re.compile(PHRASES.weighted_zh or r"(?!)")
_WHICH_EN = re.compile(PHRASES.which_en)
_HIGH_EN = re.compile(
    r"\b(?:highest|higher|priciest|pricier|dearest|most|maximum|max|top|best[\s-]?sell\w*"
    r"|greatest|biggest|largest|costliest|peak|peaked)\b"
)
_LOW_EN = re.compile(
    r"\b(?:lowest|lower|cheapest|cheaper|least|fewest|minimum|min|bottom|worst[\s-]?sell\w*"
    r"|smallest|weakest)\b"
)
_MEAN_EN = re.compile(r"\baverage\b|\bmean\b|\bavg\b|\btypical\b|\boverall\b|\bprice\s+level\b")

# -- Chinese -------------------------------------------------------------------------------

_UNITS_ZH = re.compile(measure_words(Metric.UNITS).zh)
_VALUE_ZH = re.compile(measure_words(Metric.VALUE).zh)
_HIGH_ZH = re.compile(
    r"最高|最贵|最昂贵|最多|最好|最大|最火|最佳|最突出|突出|领先|榜首|最畅销|最旺|最热"
    r"|更高|更贵|更多|较高|较多|较贵|更好"
)
_LOW_ZH = re.compile(
    r"最低|最便宜|最亲民|最实惠|最少|最差|最小|最不理想|不理想|最冷清|垫底|最弱"
    r"|更低|更便宜|更少|较低|较少|较便宜|更差"
)
_TOP_N_ZH = re.compile(
    rf"前\s*(?P<a>{ZH_NUM})\s*(?:名|位|个)?|(?P<b>{ZH_NUM})\s*个(?:{PHRASES.entity_nouns_zh})"
    rf"|哪\s*(?P<c>{ZH_NUM})\s*个|(?P<d>{ZH_NUM})\s*(?:大|个)(?=[^，。？]*?(?:{PHRASES.entity_nouns_zh}))"
)
_RANGE_ZH = re.compile(PHRASES.range_zh)
_THRESHOLD_ZH = re.compile(
    r"(?P<dir>超过|高于|多于|大于|超出|突破|涨破|站上|不低于|低于|少于|小于|不足|不到|不超过|跌破|跌穿)\s*"
    r"(?P<v>\d+(?:\.\d+)?)\s*(?P<w>万)?"
)
# "2万以上", "15000元以下": the bound before its direction word.
_THRESHOLD_AFTER_ZH = re.compile(PHRASES.threshold_after_zh)
_CHANGE_ZH = re.compile(
    r"(?:高|低|贵|便宜|涨|跌|多|少)了?多少|相差多少|差多少|差距多大|涨了多少|跌了多少|变化了多少|变动了多少|变化多少|涨幅|跌幅|变化幅度|变化率|增幅|降幅|涨跌"
    r"|(?:增长|上涨|下跌|下降|减少|增加|上升|降低)了?多少"
    r"|(?:涨|跌|上涨|下跌|变化|增长|下降)了?百分之(?:几|多少)"
)
_WHICH_MONTH_ZH = re.compile(r"哪个月|哪一个月|几月|哪月")
_COUNT_ZH = re.compile(PHRASES.count_zh)
_MEAN_ZH = re.compile(r"平均|均值")
_WHICH_ZH = re.compile(r"哪|有哪些|列出|排名|排行")


@dataclass(frozen=True, slots=True)
class Cues:
    """What the family readers found in one question."""

    metric: Metric
    change: ChangeMeasure | None
    which_month: Extreme | None
    threshold: Threshold | None


def _amount(value: str, thousand: str | None) -> float:
    number = float(value.replace(",", ""))
    return number * 1000 if thousand else number


def _en_n(text: str) -> int:
    return int(text) if text.isdigit() else _EN_NUMBERS[text]


def metric_of(text: str, zh: bool) -> Metric:
    """Units when the question asks about sales, else the price."""
    units = (_UNITS_ZH if zh else _UNITS_EN).search(text)
    if units is None:
        return Metric.VALUE
    if not zh and re.search(PHRASES.value_not_units_en, text):
        return Metric.VALUE
    return Metric.UNITS


def extreme_of(text: str, zh: bool) -> Extreme | None:
    """The first highest / lowest word, or None."""
    high, low = (_HIGH_ZH, _LOW_ZH) if zh else (_HIGH_EN, _LOW_EN)
    h, lo = high.search(text), low.search(text)
    if h and (not lo or h.start() < lo.start()):
        return Extreme.HIGHEST
    return Extreme.LOWEST if lo else None


def read_cues(text: str, zh: bool, metric: Metric) -> Cues:
    """Numeric change, which-month and threshold of a project question.

    ``metric`` is the measure pass's reading, carried into the cues.
    """
    change: ChangeMeasure | None = None
    if zh:
        found = _CHANGE_ZH.search(text)
        if found:
            relative = any(w in found.group() for w in ("幅", "率", "百分"))
            change = ChangeMeasure.RELATIVE if relative else ChangeMeasure.ABSOLUTE
    elif _CHANGE_EN.search(text) and (
        not _CHOICE_EN.search(text) or re.search(r"\bhow\s+much\b|\bby\s+what\b", text)
    ):
        relative = re.search(r"percent|%|\brate\b|relative", text)
        change = ChangeMeasure.RELATIVE if relative else ChangeMeasure.ABSOLUTE
    which_month = None
    if (_WHICH_MONTH_ZH if zh else _WHICH_MONTH_EN).search(text):
        which_month = extreme_of(text, zh) or Extreme.HIGHEST
    return Cues(metric, change, which_month, threshold_of(text, zh))


def threshold_of(text: str, zh: bool) -> Threshold | None:
    """A Yes / No threshold: "above 25,000", "超过2万"."""
    if zh:
        m = _THRESHOLD_ZH.search(text) or _THRESHOLD_AFTER_ZH.search(text)
        if not m:
            return None
        value = float(m.group("v")) * (10_000 if m.group("w") else 1)
        above = (
            "超过",
            "高于",
            "多于",
            "大于",
            "超出",
            "突破",
            "涨破",
            "站上",
            "不低于",
            "以上",
            "之上",
        )
        return Threshold(m.group("dir") in above, value)
    m = _THRESHOLD_EN.search(text)
    if not m:
        return None
    value = _amount(m.group("v"), m.group("k"))
    return Threshold(not re.match(_BELOW_EN, m.group("dir")), value)


def range_of(text: str, zh: bool) -> tuple[float | None, float | None] | None:
    """Bounds of a price filter: "between A and B", "above A", "位于A至B之间"."""
    if zh:
        m = _RANGE_ZH.search(text)
        if m and re.search(r"之间|区间|范围|介于|位于|在", text):
            a = float(m.group("a")) * (10_000 if m.group("wa") else 1)
            b = float(m.group("b")) * (10_000 if m.group("wb") or m.group("wa") else 1)
            return a, b
        t = threshold_of(text, zh)
        if t is not None:
            return (t.value, None) if t.above else (None, t.value)
        return None
    m = _BETWEEN_EN.search(text)
    if m:
        a = m.group("a") or m.group("c")
        b = m.group("b") or m.group("d")
        ka = m.group("ka") or m.group("kc")
        kb = m.group("kb") or m.group("kd")
        return _amount(a, ka or kb), _amount(b, kb)
    t = threshold_of(text, zh)
    if t is not None:
        return (t.value, None) if t.above else (None, t.value)
    return None


def top_n_of(text: str, zh: bool) -> int | None:
    """N of "top N", "the three cheapest", "前五"."""
    m = (_TOP_N_ZH if zh else _TOP_N_EN).search(text)
    if not m:
        return None
    word = next(g for g in m.groups() if g)
    return zh_number(word) if zh else _en_n(word)


def scope_query_of(text: str, zh: bool, metric: Metric) -> ScopeQuery:
    """What a question about a district or city as a whole asks for.

    ``metric`` is the measure pass's reading (price, or units sold).
    """
    value_word = (_VALUE_ZH if zh else _VALUE_EN).search(text)
    count = (_COUNT_ZH if zh else _COUNT_EN).search(text)
    if count:
        return ScopeQuery(ScopeOp.COUNT, Metric.UNITS)
    n = top_n_of(text, zh)
    bounds = range_of(text, zh)
    which = (_WHICH_ZH if zh else _WHICH_EN).search(text)
    units_rank = metric is Metric.UNITS
    if (bounds is not None and value_word is not None) or (bounds is not None and not units_rank):
        low, high = bounds
        rest = _without(text, bounds_match(text, zh))
        if units_rank and extreme_of(rest, zh) is not None:
            extreme = extreme_of(rest, zh) or Extreme.HIGHEST
            return ScopeQuery(
                ScopeOp.FILTER_THEN_PICK, Metric.VALUE, extreme, Metric.UNITS, 1, low, high
            )
        return ScopeQuery(ScopeOp.FILTER, Metric.VALUE, low=low, high=high)
    if units_rank and value_word is not None and (n is not None or _top_units(text, zh)):
        # "among the five best-selling projects, which had the lowest price"
        extreme = _value_extreme(text, zh) or Extreme.HIGHEST
        return ScopeQuery(ScopeOp.TOP_THEN_PICK, Metric.VALUE, extreme, Metric.UNITS, n or 1)
    extreme = extreme_of(text, zh)
    if extreme is None and n is not None:
        extreme = Extreme.HIGHEST
    if extreme is not None and (which or n is not None):
        if n is not None and n > 1:
            return ScopeQuery(ScopeOp.TOP, metric, extreme, metric, n)
        return ScopeQuery(ScopeOp.PICK, metric, extreme, metric)
    if (WEIGHTED_ZH if zh else WEIGHTED_EN).search(text):
        return ScopeQuery(ScopeOp.WEIGHTED, Metric.VALUE)  # the units-weighted mean price
    if (EVERY_ENTITY_ZH if zh else EVERY_ENTITY_EN).search(text):
        _refuse_every_but(text, zh)
        return ScopeQuery(ScopeOp.EACH, metric)  # "every project of D": each one's value
    if metric is Metric.UNITS:
        # "the total units sold across A and B": one sum ("across" alone is filler elsewhere)
        combined = (COMBINED_ZH if zh else _COMBINED_TOTAL_EN).search(text) is not None
        return ScopeQuery(ScopeOp.TOTAL, Metric.UNITS, combined=combined)
    return ScopeQuery(ScopeOp.MEAN, Metric.VALUE)


_NOT_WITH_EVERY_EN = re.compile(
    rf"{_HIGH_EN.pattern}|{_LOW_EN.pattern}|\b(?:each|every)\s+month\b|\bmonth[\s-]by[\s-]month\b"
    r"|\bper\s+month\b|\bmonthly\s+\w+s\b"
)
_NOT_WITH_EVERY_ZH = re.compile(rf"{_HIGH_ZH.pattern}|{_LOW_ZH.pattern}|每个?月|各个?月|逐月")


def _refuse_every_but(text: str, zh: bool) -> None:
    """Refuse what "every X of D" cannot carry: it is each one's value, window mean or sum.

    "The highest price of every X in 2021" would need each one's maximum; rather than
    answer its mean, the word is refused by name.
    """
    found = (_NOT_WITH_EVERY_ZH if zh else _NOT_WITH_EVERY_EN).search(text)
    if found:
        word = found.group().strip()
        raise QuestionError(
            f"“{word}”不能与“每个”一起回答：每个只给出一个月的值、时间段的均值或合计；请去掉“{word}”再问"
            if zh
            else f"'{word}' is not read together with 'every': each one is listed with its value "
            f"for one month, its mean over a window or its total; ask without '{word}'"
        )


def bounds_match(text: str, zh: bool) -> re.Match[str] | None:
    """Where the range or threshold of a filter is written."""
    if zh:
        return (
            _RANGE_ZH.search(text) or _THRESHOLD_ZH.search(text) or _THRESHOLD_AFTER_ZH.search(text)
        )
    return _BETWEEN_EN.search(text) or _THRESHOLD_EN.search(text)


def _without(text: str, match: re.Match[str] | None) -> str:
    if match is None:
        return text
    return text[: match.start()] + " " + text[match.end() :]


def _top_units(text: str, zh: bool) -> bool:
    if zh:
        return bool(re.search(PHRASES.top_units_zh, text))
    return bool(re.search(r"best[\s-]?sell\w*|top\s+\w+\s+by\s+units|most\s+units", text))


def _value_extreme(text: str, zh: bool) -> Extreme | None:
    """The extreme that applies to the price (after "among the top N by units")."""
    if zh:
        m = re.search(
            PHRASES.value_extreme_zh,
            text,
        )
        if not m:
            return None
        word = m.group(1) or m.group(2)
        return Extreme.HIGHEST if word in ("最高", "最贵", "更高") else Extreme.LOWEST
    m = re.search(
        PHRASES.value_extreme_en,
        text,
    )
    if not m:
        return None
    word = m.group(1) or m.group(2)
    return (
        Extreme.HIGHEST
        if word in ("highest", "priciest", "pricier", "most expensive")
        else Extreme.LOWEST
    )


# What the cue pass claims: every expression these readers consume.
CUE_PATTERNS_EN: tuple[tuple[re.Pattern[str], str], ...] = (
    (_CHANGE_EN, "change"),
    (_CHOICE_EN, "choice"),
    (_WHICH_MONTH_EN, "which month"),
    (_THRESHOLD_EN, "threshold"),
    (_BETWEEN_EN, "range"),
    (_TOP_N_EN, "top n"),
    (_COUNT_EN, "count"),
    (_WHICH_EN, "which"),
    (_HIGH_EN, "highest"),
    (_LOW_EN, "lowest"),
    (_MEAN_EN, "mean"),
    (EVERY_ENTITY_EN, "every"),
    (WEIGHTED_EN, "weighted"),
)
CUE_PATTERNS_ZH: tuple[tuple[re.Pattern[str], str], ...] = (
    (_HIGH_ZH, "highest"),
    (_LOW_ZH, "lowest"),
    (_TOP_N_ZH, "top n"),
    (_RANGE_ZH, "range"),
    (_THRESHOLD_ZH, "threshold"),
    (_THRESHOLD_AFTER_ZH, "threshold"),
    (_CHANGE_ZH, "change"),
    (_WHICH_MONTH_ZH, "which month"),
    (_COUNT_ZH, "count"),
    (_MEAN_ZH, "mean"),
    (_WHICH_ZH, "which"),
    (EVERY_ENTITY_ZH, "every"),
    (WEIGHTED_ZH, "weighted"),
)
