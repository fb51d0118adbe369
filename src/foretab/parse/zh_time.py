"""Chinese time expressions, relative to the reference month R (docs/design.md §3).

Absolute: 2022年3月, 2022年3月份, 2022年 / 2022年全年 / 2022全年, 2022年第一季度 / 2022年Q1,
2022年上半年 / 下半年, 2022年前两个月, 2019年5月至2019年8月 (至 / 到 / - / ~ / 、一直到),
2021年10月至12月, 从…到…, "2021年12月与2022年6月" (a list of months: 与 / 和 / 以及 / 及 / 、).
Relative: 明年3月 / 今年5月 / 去年12月, 下个月 / 下月 R+1, 下下个月 R+2, 上个月 / 上月 R−1, 本月 / 这个月 / 目前 / 现在 /
当前 / 如今 / 眼下 R, 今年以来 / 年初至今 Jan..R, 下季度 / 下个季度, 本季度, 上季度, 明年 / 来年, 今年, 去年, 前年,
明年上半年 / 下半年, 明年第一季度, 未来三个月 / 接下来N个月 / 今后N个月, 未来半年 / 未来一年, 过去半年, 过去N个月 / 近N个月,
N个月后. Numbers may be Chinese numerals (一..十二, 两) or digits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from foretab.core.months import Month
from foretab.core.plan import TimeWindow

_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
           "八": 8, "九": 9}  # fmt: skip
NUM = r"(?:\d{1,2}|十[一二]?|[一二两三四五六七八九])"


def zh_number(text: str) -> int:
    """``"三"`` → 3, ``"十二"`` → 12, ``"12"`` → 12."""
    if text.isdigit():
        return int(text)
    if text.startswith("十"):
        return 10 + (_DIGITS[text[1]] if len(text) > 1 else 0)
    if "十" in text:
        tens, _, ones = text.partition("十")
        return _DIGITS[tens] * 10 + (_DIGITS[ones] if ones else 0)
    return _DIGITS[text]


@dataclass(frozen=True, slots=True)
class ZhTime:
    """A Chinese time expression: its window and character span."""

    window: TimeWindow
    start: int
    end: int


_YM = r"(?P<{y}>\d{{4}})\s*年\s*(?:的\s*)?(?P<{m}>\d{{1,2}})\s*月份?"
# "2022年5月以及同年12月", "2019年6月、7月和8月": later months of a list, same year.
_MORE = re.compile(
    r"\s*(?:与|和|以及|及|、|，|,|跟|还有)\s*(?:同年|当年|该年)?(?:的)?\s*(?P<m>\d{1,2})\s*月份?"
)
_ONE = re.compile(_YM.format(y="y", m="m"))
_RANGE = re.compile(
    r"(?:从|自)?" + _YM.format(y="y1", m="m1")
    + r"\s*(?:至|到|-|－|—|~|～|一直到|直至)\s*"
    + r"(?:(?P<y2>\d{4})\s*年\s*)?(?P<m2>\d{1,2})\s*月份?(?:期间|之间|间)?"
)  # fmt: skip
_LIST_SEP = re.compile(r"^\s*(?:与|和|以及|及|、|，|,|跟|还有)\s*$")
_QUARTER = re.compile(
    r"(?P<y>\d{4}|明年|今年|去年)\s*年?\s*(?:第\s*(?P<q>[一二三四1-4])\s*季度|[Qq](?P<q2>[1-4]))"
)
# "明年3月", "今年五月份", "去年12月": a month of a year named relative to R.
_REL_MONTH = re.compile(rf"(?P<y>明年|来年|今年|去年|前年)\s*(?:的\s*)?(?P<m>{NUM})\s*月份?")
_HALF = re.compile(r"(?P<y>\d{4}\s*年|明年|今年|去年)\s*(?P<h>上|下|前|后)半年")
_FIRST_N = re.compile(rf"(?P<y>\d{{4}}\s*年|明年|今年)\s*(?:的)?前\s*(?P<n>{NUM})\s*个?月")
_YEAR = re.compile(r"(?P<y>\d{4})\s*(?:年(?:全年|整年|一整年|度)?|全年)(?!\s*\d{1,2}\s*月)")
# "2019年到2021年(之间)": January of the first year to December of the last.
_YEAR_RANGE = re.compile(
    r"(?:从|自)?(?P<y1>\d{4})\s*年?\s*(?:至|到|-|－|—|~|～)\s*(?P<y2>\d{4})\s*年"
    r"(?!\s*\d{1,2}\s*月)(?:之间|期间|间)?"
)
# "2021年第二季度到第四季度", "2021年Q2至Q4"
_QUARTER_RANGE = re.compile(
    r"(?P<y>\d{4}|明年|今年|去年)\s*年?\s*(?:第\s*(?P<q1>[一二三四1-4])\s*季度?|[Qq](?P<q1b>[1-4]))"
    r"\s*(?:至|到|-|－|—|~|～)\s*(?:第\s*(?P<q2>[一二三四1-4])\s*季度|[Qq](?P<q2b>[1-4]))"
)
# "2021年八月", "二〇二一年十二月" (the year's digits normalised before): a month in words.
_YM_WORDS = re.compile(r"(?P<y>\d{4})\s*年\s*(?P<m>[一二三四五六七八九十]{1,3})\s*月份?")
# "最近" / "近期" alone: the last three months R−2..R (docs/design.md §3, stated in the plan).
_RECENT = re.compile(r"最近(?!\s*(?:的\s*)?(?:[\d一二三四五六七八九十两]+\s*个月|半年|一年))|近期")
_RELATIVE: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), kind)
    for p, kind in (
        (rf"(?:未来|接下来|今后|之后|往后)的?\s*(?P<n>{NUM})\s*个月", "next_n"),
        (rf"(?:过去|近|最近|前)\s*(?P<n>{NUM})\s*个月", "past_n"),
        (rf"(?P<n>{NUM})\s*个月(?:后|以后|之后)", "in_n"),
        (rf"(?P<n>{NUM})\s*个月(?:前|以前|之前)", "ago_n"),
        # 半年后 / 一年前: not after a digit ("2021年前" is not "a year ago").
        (r"(?<![\d〇零一二三四五六七八九十])半年(?:后|以后|之后)", "in_6"),
        (r"(?<![\d〇零一二三四五六七八九十])半年(?:前|以前|之前)", "ago_6"),
        (r"(?<![\d〇零一二三四五六七八九十])(?:一|1)\s*年(?:后|以后|之后)", "in_12"),
        (r"(?<![\d〇零一二三四五六七八九十])(?:一|1)\s*年(?:前|以前|之前)", "ago_12"),
        (r"下下个?月", "next2"),
        (r"下个?月", "next"),
        (r"上个?月", "last"),
        (r"(?:未来|接下来|今后|之后|往后)的?\s*半年", "next_6"),
        (r"(?:未来|接下来|今后|之后|往后)的?\s*一年", "next_12"),
        (r"(?:过去|近|最近)的?\s*半年", "past_6"),
        (r"(?:过去|近|最近)的?\s*一年", "past_12"),
        (r"今年以来|年初至今|今年至今|今年到现在|年初以来|年初到现在", "ytd"),
        (r"本月|这个月|当月|目前|现在|当前|如今|眼下|现阶段|最新", "now"),
        (r"下个?季度", "next_q"),
        (r"本季度|这个季度", "this_q"),
        (r"上个?季度", "last_q"),
        (r"明年|来年|下一年", "next_y"),
        (r"今年|本年", "this_y"),
        (r"去年|上一年", "last_y"),
        (r"前年", "before_last_y"),
    )
)


def _year_word(text: str, reference: Month) -> int:
    text = text.replace("年", "").strip()
    if text.isdigit():
        return int(text)
    return reference.year + {"明": 1, "来": 1, "今": 0, "去": -1, "前": -2}[text[0]]


def _quarter_start(month: Month) -> Month:
    return Month(month.year, (month.month - 1) // 3 * 3 + 1)


def _relative(kind: str, match: re.Match[str], r: Month) -> tuple[Month, Month]:
    n = zh_number(match.group("n")) if "n" in match.groupdict() and match.group("n") else 0
    q = _quarter_start(r)
    return {
        "next_n": lambda: (r + 1, r + n),
        "past_n": lambda: (r - (n - 1), r),
        "in_n": lambda: (r + n, r + n),
        "ago_n": lambda: (r - n, r - n),
        "in_6": lambda: (r + 6, r + 6),
        "ago_6": lambda: (r - 6, r - 6),
        "in_12": lambda: (r + 12, r + 12),
        "ago_12": lambda: (r - 12, r - 12),
        "next2": lambda: (r + 2, r + 2),
        "next": lambda: (r + 1, r + 1),
        "last": lambda: (r - 1, r - 1),
        "now": lambda: (r, r),
        "ytd": lambda: (Month(r.year, 1), r),
        "next_6": lambda: (r + 1, r + 6),
        "next_12": lambda: (r + 1, r + 12),
        "past_6": lambda: (r - 5, r),
        "past_12": lambda: (r - 11, r),
        "next_q": lambda: (q + 3, q + 5),
        "this_q": lambda: (q, q + 2),
        "last_q": lambda: (q - 3, q - 1),
        "next_y": lambda: (Month(r.year + 1, 1), Month(r.year + 1, 12)),
        "this_y": lambda: (Month(r.year, 1), Month(r.year, 12)),
        "last_y": lambda: (Month(r.year - 1, 1), Month(r.year - 1, 12)),
        "before_last_y": lambda: (Month(r.year - 2, 1), Month(r.year - 2, 12)),
    }[kind]()


def find_zh_time(question: str, reference: Month) -> ZhTime | None:
    """The window a Chinese question names, or None when it names none."""
    found: list[tuple[int, int, Month, Month, tuple[Month, ...]]] = []

    def add(match: re.Match[str], first: Month, last: Month, only: tuple[Month, ...] = ()) -> None:
        if first <= last:
            found.append((match.start(), match.end(), first, last, only))

    for m in _RANGE.finditer(question):
        y1, m1 = int(m.group("y1")), int(m.group("m1"))
        y2 = int(m.group("y2")) if m.group("y2") else y1
        add(m, Month(y1, m1), Month(y2, int(m.group("m2"))))
    singles = [
        (m.start(), m.end(), Month(int(m.group("y")), int(m.group("m"))))
        for m in _ONE.finditer(question)
        if 1 <= int(m.group("m")) <= 12
    ]
    # "2021年12月与2022年6月": single months joined by list words are one question.
    group: list[tuple[int, int, Month]] = []
    for item in singles:
        if group and _LIST_SEP.match(question[group[-1][1] : item[0]]):
            group.append(item)
            continue
        if len(group) > 1:
            _add_list(found, group)
        group = [item]
    if len(group) > 1:
        _add_list(found, group)
    for start, end, month in singles:
        found.append((start, end, month, month, ()))
        listed, at = [month], end
        while (more := _MORE.match(question, at)) and 1 <= int(more.group("m")) <= 12:
            # "5月以及同年12月" but not "5月至8月" (a range) or "5月与2022年6月" (a full month)
            if question[more.end() : more.end() + 1] == "年":
                break
            listed.append(Month(month.year, int(more.group("m"))))
            at = more.end()
        if len(listed) > 1:
            months = tuple(listed)
            found.append((start, at, min(months), max(months), months))
    for m in _QUARTER.finditer(question):
        year = _year_word(m.group("y"), reference)
        q = zh_number(m.group("q") or m.group("q2"))
        add(m, Month(year, 3 * q - 2), Month(year, 3 * q))
    for m in _REL_MONTH.finditer(question):
        month = zh_number(m.group("m"))
        if 1 <= month <= 12:
            year = _year_word(m.group("y"), reference)
            add(m, Month(year, month), Month(year, month))
    for m in _HALF.finditer(question):
        year = _year_word(m.group("y"), reference)
        first_half = m.group("h") in ("上", "前")
        add(m, Month(year, 1 if first_half else 7), Month(year, 6 if first_half else 12))
    for m in _FIRST_N.finditer(question):
        year = _year_word(m.group("y"), reference)
        add(m, Month(year, 1), Month(year, min(zh_number(m.group("n")), 12)))
    for m in _YEAR.finditer(question):
        year = int(m.group("y"))
        add(m, Month(year, 1), Month(year, 12))
    for m in _YEAR_RANGE.finditer(question):
        add(m, Month(int(m.group("y1")), 1), Month(int(m.group("y2")), 12))
    for m in _QUARTER_RANGE.finditer(question):
        year = _year_word(m.group("y"), reference)
        q1 = zh_number(m.group("q1") or m.group("q1b"))
        q2 = zh_number(m.group("q2") or m.group("q2b"))
        add(m, Month(year, 3 * q1 - 2), Month(year, 3 * q2))
    for m in _YM_WORDS.finditer(question):
        month = zh_number(m.group("m"))
        if 1 <= month <= 12:
            add(m, Month(int(m.group("y")), month), Month(int(m.group("y")), month))
    for m in _RECENT.finditer(question):
        add(m, reference - 2, reference)
    for pattern, kind in _RELATIVE:
        for m in pattern.finditer(question):
            add(m, *_relative(kind, m, reference))
    if not found:
        return None
    # The longest expression wins; one inside a longer one is part of it.
    start, end, first, last, only = max(found, key=lambda f: (f[1] - f[0], -f[0]))
    return ZhTime(TimeWindow(first, last, question[start:end], only), start, end)


def _add_list(found: list, group: list[tuple[int, int, Month]]) -> None:
    months = tuple(month for _, _, month in group)
    found.append((group[0][0], group[-1][1], min(months), max(months), months))
