"""Time expressions: the month window a question names, relative to the reference month R.

R is "now": the last month of history (docs/design.md §3). Conventions, all relative to R:

* "next month" = R+1; "the month after next" = R+2; "the next/coming N months" = R+1..R+N.
* "next quarter" = the next *calendar* quarter; "the next N quarters" likewise.
* "next year" / "the coming year" = the calendar year after R's year.
* "this month", "now", "currently", "the latest month" = R; "last month" = R-1;
  "this year" = R's calendar year; "last year" = the year before; "this quarter" = R's
  quarter; "last quarter" = the quarter before it; "the past N months" = R-N+1..R.
* A month named without a year ("in March") is the next such month after R, or the latest
  one at or before R when the question is in the past tense ("was", "were", "did").
* "by March 2022" = March 2022; "the end of next year" = its December; "the beginning of
  2022" = its January; "(by) the end / start of" any window (a quarter, a half, "next
  quarter") = its last / first month.
* "in 5 months" = R+5; "three months ago" = R-3; "since January 2021" = Jan 2021..R;
  "next March" / "this coming March" = the next March after R; a quarter without a year
  ("in the third quarter", "next Q1") = the next such quarter (past tense: the latest).
* Lists and hyphens: "Feb-May 2022", "March, April and May 2022", "2022-02 to 2022-05".

Numbers may be words (one..twelve) or digits. ``catalog(R)`` lists the canonical
expressions (each round-trips through ``find_time_expression``) for the dataset builder.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from foretab.core.months import MONTH_NAMES, Month
from foretab.core.plan import TimeWindow
from foretab.errors import QuestionError
from foretab.parse.needed import Clauses, may_match_all, needed_clauses
from foretab.parse.phrases import PHRASES

NUMBER_WORDS = (
    "one", "two", "three", "four", "five", "six",
    "seven", "eight", "nine", "ten", "eleven", "twelve",
)  # fmt: skip
ORDINALS = ("first", "second", "third", "fourth")
_NUM = r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\d{1,2})"
_MONTH_ALTS = (
    r"january|february|march|april|may|june|july|august|september|october|november|december"
    r"|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec"
)
_YEAR = r"(?:19|20)\d{2}"
_REL_YEAR = (
    r"(?:the\s+)?(?:next|coming|following|upcoming)\s+year|next\s+calendar\s+year"
    r"|(?:the\s+)?(?:this|current)\s+year|(?:the\s+)?(?:last|previous|prior)\s+year"
)
_PRE = r"(?:(?:in|during|for|over|throughout|across|within|by|at|on|around)\s+)?"
_RANGE_TO = r"(?:to|through|thru|until|till|-|–|—)"


def _month(name: str) -> str:
    return rf"(?P<{name}>{_MONTH_ALTS})\.?"


def _yearref(name: str) -> str:
    return rf"(?:(?P<{name}>{_YEAR})|(?P<{name}rel>{_REL_YEAR}))"


def _num(text: str) -> int:
    text = text.strip().lower()
    if text.isdigit():
        return int(text)
    return NUMBER_WORDS.index(text) + 1


def _month_number(text: str) -> int:
    text = text.lower().rstrip(".")
    for index, name in enumerate(MONTH_NAMES):
        if name.lower().startswith(text[:3]):
            return index + 1
    raise ValueError(text)  # unreachable: the regex only admits month names


def _year_of(match: re.Match[str], name: str, reference: Month) -> int:
    groups = match.groupdict()
    if groups.get(name):
        return int(groups[name])
    rel = (groups.get(f"{name}rel") or "").lower()
    if re.search(r"next|coming|following|upcoming", rel):
        return reference.year + 1
    if re.search(r"this|current", rel):
        return reference.year
    return reference.year - 1


def _quarter_start(month: Month) -> Month:
    return Month(month.year, (month.month - 1) // 3 * 3 + 1)


def _ordinal(text: str) -> int:
    text = text.lower()
    for index, word in enumerate(ORDINALS):
        if text in (word, f"{index + 1}{('st', 'nd', 'rd', 'th')[index]}", str(index + 1)):
            return index + 1
    return 0  # "last"/"final"/"latter"/"later": the caller picks the end


def _year_less(month_number: int, reference: Month, past: bool) -> Month:
    """The next such month after R, or the latest at or before R for past questions."""
    if past:
        candidate = Month(reference.year, month_number)
        return candidate if candidate <= reference else Month(reference.year - 1, month_number)
    candidate = Month(reference.year, month_number)
    return candidate if candidate > reference else Month(reference.year + 1, month_number)


Span = tuple[Month, Month]
Resolver = Callable[[re.Match[str], Month, bool], Span]


@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: re.Pattern[str]
    resolve: Resolver
    # "now"-like words name the comparison baseline in "higher than now": another
    # expression in the question wins over them.
    weak: bool = False
    # A question missing every word of one of these sets (case-folded) cannot match: its
    # scan is skipped.
    needed: Clauses | None = None


def _rule(pattern: str, resolve: Resolver, *, weak: bool = False, pre: bool = True) -> _Rule:
    text = (_PRE if pre else "") + f"(?:{pattern})"
    full = rf"(?<![\w-])(?:{text})(?![\w-])"
    needed = needed_clauses(full, re.IGNORECASE)
    return _Rule(re.compile(full, re.IGNORECASE), resolve, weak, needed)


def _next_n_months(m: re.Match[str], r: Month, _: bool) -> Span:
    return r + 1, r + _num(m.group("n"))


def _months_from_now(m: re.Match[str], r: Month, _: bool) -> Span:
    n = 1 if m.group("n").lower() in ("a", "one") else _num(m.group("n"))
    target = r + (12 * n if m.group("unit").lower().startswith("year") else n)
    return target, target


def _months_ago(m: re.Match[str], r: Month, _: bool) -> Span:
    n = 1 if m.group("n").lower() in ("a", "one") else _num(m.group("n"))
    target = r - (12 * n if m.group("unit").lower().startswith("year") else n)
    return target, target


def _since(m: re.Match[str], r: Month, _: bool) -> Span:
    return Month(_year_of(m, "y", r), _month_number(m.group("m"))), r


def _fixed_year(offset: int) -> Resolver:
    def resolve(m: re.Match[str], r: Month, _: bool) -> Span:
        return Month(r.year + offset, 1), Month(r.year + offset, 12)

    return resolve


def _past_n_months(m: re.Match[str], r: Month, _: bool) -> Span:
    return r - (_num(m.group("n")) - 1), r


def _next_quarters(m: re.Match[str], r: Month, _: bool) -> Span:
    start = _quarter_start(r) + 3
    count = _num(m.group("n")) if m.groupdict().get("n") else 1
    return start, start + (3 * count - 1)


def _half(m: re.Match[str], r: Month, _: bool) -> Span:
    year = _year_of(m, "y", r)
    which = m.group("h").lower()
    first = which in ("first", "1st", "1")
    return (Month(year, 1), Month(year, 6)) if first else (Month(year, 7), Month(year, 12))


def _quarter(m: re.Match[str], r: Month, _: bool) -> Span:
    year = _year_of(m, "y", r)
    number = _ordinal(m.group("q")) or 4
    start = Month(year, 3 * number - 2)
    return start, start + 2


def _year_range(m: re.Match[str], r: Month, _: bool) -> Span:
    return Month(int(m.group("y1")), 1), Month(int(m.group("y2")), 12)


def _quarter_range(m: re.Match[str], r: Month, _: bool) -> Span:
    year = _year_of(m, "y", r)
    return Month(year, 3 * int(m.group("q1")) - 2), Month(year, 3 * int(m.group("q2")))


def _year_edge(m: re.Match[str], r: Month, _: bool) -> Span:
    year = _year_of(m, "y", r)
    month = Month(year, 12) if m.group("e").lower() in ("end", "close") else Month(year, 1)
    return month, month


def _first_last_months(m: re.Match[str], r: Month, _: bool) -> Span:
    year = _year_of(m, "y", r)
    count = _num(m.group("n")) if m.group("n") else 1
    if m.group("fl").lower() in ("first", "opening"):
        return Month(year, 1), Month(year, count)
    return Month(year, 13 - count), Month(year, 12)


def _month_year(m: re.Match[str], r: Month, _: bool) -> Span:
    month = Month(_year_of(m, "y", r), _month_number(m.group("m")))
    return month, month


def _iso_month(m: re.Match[str], r: Month, _: bool) -> Span:
    month = Month(int(m.group("y")), int(m.group("mm")))
    return month, month


def _iso_range(m: re.Match[str], r: Month, _: bool) -> Span:
    return Month(int(m.group("y1")), int(m.group("mm1"))), Month(
        int(m.group("y2")), int(m.group("mm2"))
    )


def _range_one_year(m: re.Match[str], r: Month, _: bool) -> Span:
    year = _year_of(m, "y", r)
    first, last = _month_number(m.group("m1")), _month_number(m.group("m2"))
    # "from November to February 2023" starts in the year before.
    start_year = year - 1 if first > last else year
    return Month(start_year, first), Month(year, last)


def _range_two_years(m: re.Match[str], r: Month, _: bool) -> Span:
    first = Month(int(m.group("y1")), _month_number(m.group("m1")))
    last = Month(int(m.group("y2")), _month_number(m.group("m2")))
    return first, last


def _range_no_year(m: re.Match[str], r: Month, past: bool) -> Span:
    first_number, last_number = _month_number(m.group("m1")), _month_number(m.group("m2"))
    if past:
        last = _year_less(last_number, r, True)
        first = Month(last.year if first_number <= last_number else last.year - 1, first_number)
        return first, last
    first = _year_less(first_number, r, False)
    last = Month(first.year if last_number >= first_number else first.year + 1, last_number)
    return first, last


def _year_less_quarter(m: re.Match[str], r: Month, past: bool) -> Span:
    number = _ordinal(m.group("q"))
    start = Month(r.year, 3 * number - 2)
    if past:
        while start + 2 > r:
            start = start - 12
    else:
        while start <= r:
            start = start + 12
    return start, start + 2


def _next_named_month(m: re.Match[str], r: Month, _: bool) -> Span:
    month = _year_less(_month_number(m.group("m")), r, False)
    return month, month


def _bare_month(m: re.Match[str], r: Month, past: bool) -> Span:
    month = _year_less(_month_number(m.group("m")), r, past)
    return month, month


def _whole_year(m: re.Match[str], r: Month, _: bool) -> Span:
    year = _year_of(m, "y", r)
    return Month(year, 1), Month(year, 12)


def _year_to_date(m: re.Match[str], r: Month, _: bool) -> Span:
    return Month(r.year, 1), r


def _this_quarter(m: re.Match[str], r: Month, _: bool) -> Span:
    start = _quarter_start(r)
    return start, start + 2


def _last_quarter(m: re.Match[str], r: Month, _: bool) -> Span:
    start = _quarter_start(r) - 3
    return start, start + 2


def _fixed(offset_first: int, offset_last: int) -> Resolver:
    def resolve(m: re.Match[str], r: Month, _: bool) -> Span:
        return r + offset_first, r + offset_last

    return resolve


_NEXT = r"(?:the\s+)?(?:next|coming|following|upcoming|forthcoming)"
_HALF_WORD = r"(?P<h>first|second|1st|2nd|latter|later|last|final)"
_QUARTER_WORD = r"(?P<q>first|second|third|fourth|1st|2nd|3rd|4th|last|final)"

_RULES: tuple[_Rule, ...] = (
    # forward, relative to R
    _rule(rf"{_NEXT}\s+month", _fixed(1, 1)),
    _rule(r"the\s+month\s+after\s+next", _fixed(2, 2)),
    # "three months from now", "in 6 months' time", "a year from now": one month, R+N.
    _rule(
        rf"(?:in\s+)?(?P<n>{_NUM}|a|one)\s+(?P<unit>months?|years?)(?:\s+(?:from\s+now|from\s+today"
        r"|later|ahead|hence)|'?s?\s+time)",
        _months_from_now,
    ),
    # "in 5 months", "in a year": one month, R+N ("in 5 months of 2022" is not this).
    _rule(
        rf"in\s+(?P<n>{_NUM}|a|one)\s+(?P<unit>months?|years?)(?!\s+(?:of|from|to|and)\b)",
        _months_from_now,
        pre=False,
    ),
    # "in half a year", "half a year from now", "half a year ago": R+6 / R-6 (without these,
    # "a year ago" inside "half a year ago" was read as R-12).
    _rule(
        r"(?:in\s+)?(?:half\s+a|a\s+half)[\s-]+year(?:\s+(?:from\s+now|from\s+today|later"
        r"|ahead|hence)|'?s?\s+time)",
        _fixed(6, 6),
    ),
    _rule(
        r"in\s+(?:half\s+a|a\s+half)[\s-]+year(?!\s+(?:of|from|to|and)\b)", _fixed(6, 6), pre=False
    ),
    _rule(r"(?:half\s+a|a\s+half)[\s-]+year\s+(?:ago|back|earlier)", _fixed(-6, -6)),
    # "three months ago", "a year ago": one past month, R-N.
    _rule(rf"(?P<n>{_NUM}|a|one)\s+(?P<unit>months?|years?)\s+(?:ago|back|earlier)", _months_ago),
    _rule(rf"{_NEXT}\s+(?P<n>{_NUM})\s+months?", _next_n_months),
    _rule(rf"{_NEXT}\s+half[\s-]+(?:a\s+)?year|{_NEXT}\s+six[\s-]+month\s+period", _fixed(1, 6)),
    _rule(rf"{_NEXT}\s+(?:calendar\s+)?quarter", _next_quarters),
    _rule(rf"{_NEXT}\s+(?P<n>{_NUM})\s+quarters", _next_quarters),
    _rule(rf"(?P<yrel>{_NEXT}\s+(?:calendar\s+)?year|next\s+calendar\s+year)", _whole_year),
    # "the year ahead" is the coming (calendar) year, like "the coming year".
    _rule(r"(?:the\s+)?year\s+ahead", _fixed_year(1)),
    # "between 2019 and 2021", "from 2019 to 2021": January of the first to December of the last
    _rule(
        rf"(?:from\s+|between\s+)?(?:the\s+years\s+)?(?P<y1>{_YEAR})\s*(?:{_RANGE_TO}|and)\s*"
        rf"(?P<y2>{_YEAR})(?![\d-])",
        _year_range,
    ),
    # "from Q2 to Q4 2021", "Q2-Q4 2021", "between Q1 and Q3 of 2021"
    _rule(
        rf"(?:from\s+|between\s+)?q(?P<q1>[1-4])\s*(?:{_RANGE_TO}|and)\s*q(?P<q2>[1-4])\s*"
        rf"(?:of\s+)?,?\s*{_yearref('y')}",
        _quarter_range,
    ),
    # "recently", "lately", "in recent months": R−2..R (docs/design.md §3; the plan states it)
    _rule(r"(?:in\s+)?recent\s+months|recently|lately", _fixed(-2, 0)),
    # halves, quarters, edges and first/last months of a year
    _rule(rf"(?:the\s+)?{_HALF_WORD}\s+half\s+(?:of\s+)?{_yearref('y')}", _half),
    _rule(rf"{_yearref('y')}(?:'s|’s)\s+{_HALF_WORD}\s+half", _half),
    _rule(rf"h(?P<h>[12])\s+(?:of\s+)?{_yearref('y')}", _half),
    _rule(rf"(?P<y>{_YEAR})\s*h(?P<h>[12])", _half),
    _rule(rf"(?P<h>[12])h\s+(?:of\s+)?{_yearref('y')}", _half),
    _rule(rf"(?:the\s+)?{_QUARTER_WORD}\s+quarter\s+(?:of\s+)?{_yearref('y')}", _quarter),
    _rule(rf"{_yearref('y')}(?:'s|’s)\s+{_QUARTER_WORD}\s+quarter", _quarter),
    # "next Q1", "in the third quarter" (no year): the next such quarter after R, or the
    # latest one at or before R in a past-tense question.
    _rule(r"next\s+q(?P<q>[1-4])", _year_less_quarter),
    # "in Q4" (no year) was answered for now: the next Q4, or the latest in the past tense
    _rule(r"q(?P<q>[1-4])", _year_less_quarter),
    _rule(
        r"(?:the\s+)?(?P<q>first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter(?!\s+of)"
        r"(?!\s+(?:next|this|last|coming|current|previous|(?:19|20)\d\d))",
        _year_less_quarter,
    ),
    _rule(rf"{_yearref('y')}(?:'s|’s)\s+{_month('m')}", _month_year),
    _rule(rf"q(?P<q>[1-4])\s*(?:of\s+)?,?\s*{_yearref('y')}", _quarter),
    _rule(rf"(?P<y>{_YEAR})\s*-?\s*q(?P<q>[1-4])", _quarter),
    _rule(rf"(?:the\s+)?(?P<e>end|close|beginning|start)\s+of\s+{_yearref('y')}", _year_edge),
    _rule(rf"(?:the\s+)?year[\s-]?(?P<e>end)\s+(?:of\s+)?{_yearref('y')}", _year_edge),
    _rule(rf"(?P<y>{_YEAR})\s+year[\s-]?(?P<e>end)", _year_edge),
    _rule(
        rf"(?:the\s+)?(?P<fl>first|last|final|opening|closing)\s+(?P<n>{_NUM})?\s*months?\s+"
        rf"of\s+{_yearref('y')}",
        _first_last_months,
    ),
    # named months and ranges of them
    _rule(rf"{_month('m')},?\s+(?:of\s+)?{_yearref('y')}", _month_year),
    _rule(rf"(?P<y>{_YEAR})-(?P<mm>0?[1-9]|1[0-2])(?!\d)", _iso_month),
    _rule(
        rf"(?:from\s+|between\s+)?(?P<y1>{_YEAR})-(?P<mm1>0?[1-9]|1[0-2])\s*(?:{_RANGE_TO}|and)\s*"
        rf"(?P<y2>{_YEAR})-(?P<mm2>0?[1-9]|1[0-2])(?!\d)",
        _iso_range,
    ),
    _rule(
        rf"(?:from\s+)?{_month('m1')}\s+{_RANGE_TO}\s+{_month('m2')},?\s+(?:of\s+)?"
        rf"{_yearref('y')}",
        _range_one_year,
    ),
    # "Feb-May 2022", "July and August 2022", "the months of July and August 2022"
    _rule(
        rf"(?:the\s+months\s+of\s+)?{_month('m1')}(?:\s*,\s*(?:{_MONTH_ALTS})\.?)*"
        rf"\s*(?:-|–|—|,?\s(?:and|&))\s*{_month('m2')},?\s+"
        rf"(?:of\s+)?{_yearref('y')}",
        _range_one_year,
    ),
    # "2022 March", "2022, March"
    _rule(rf"(?P<y>{_YEAR}),?\s+(?!may\b){_month('m')}", _month_year),
    # "since January 2021": from then up to now.
    _rule(rf"since\s+{_month('m')},?\s+{_yearref('y')}", _since, pre=False),
    _rule(
        rf"between\s+{_month('m1')}\s+and\s+{_month('m2')},?\s+(?:of\s+)?{_yearref('y')}",
        _range_one_year,
    ),
    _rule(
        rf"(?:from\s+|between\s+)?{_month('m1')},?\s+(?P<y1>{_YEAR})\s+(?:{_RANGE_TO}|and)\s+"
        rf"{_month('m2')},?\s+(?P<y2>{_YEAR})",
        _range_two_years,
    ),
    _rule(rf"from\s+{_month('m1')}\s+{_RANGE_TO}\s+{_month('m2')}", _range_no_year, pre=False),
    _rule(rf"(?:this\s+coming|the\s+coming|coming|next)\s+{_month('m')}", _next_named_month),
    _rule(rf"between\s+{_month('m1')}\s+and\s+{_month('m2')}", _range_no_year, pre=False),
    _rule(
        rf"(?:in|by|for|during|until|till|before|around|of)\s+(?:the\s+month\s+of\s+)?"
        rf"{_month('m')}",
        _bare_month,
        pre=False,
    ),
    # whole years
    _rule(
        rf"(?:the\s+(?:whole|entire|full)\s+(?:year\s+(?:of\s+)?)?|all\s+of\s+|the\s+year\s+)?"
        rf"(?P<y>{_YEAR})",
        _whole_year,
    ),
    _rule(r"(?P<yrel>(?:the\s+)?(?:this|current)\s+(?:calendar\s+)?year)", _whole_year),
    _rule(r"(?P<yrel>(?:the\s+)?(?:last|previous|prior)\s+(?:calendar\s+)?year)", _whole_year),
    _rule(
        r"so\s+far\s+this\s+year|this\s+year\s+so\s+far|(?:the\s+)?year\s+to\s+date",
        _year_to_date,
    ),
    # past, relative to R
    # "last month" is the month before R (docs/design.md §3); the latest month is R itself.
    _rule(r"(?:the\s+)?(?:last|previous|past)\s+month", _fixed(-1, -1)),
    _rule(r"(?:the\s+)?(?:latest|most\s+recent)\s+month", _fixed(0, 0)),
    _rule(
        rf"(?:the\s+)?(?:past|last|previous|preceding|recent)\s+(?P<n>{_NUM})\s+months",
        _past_n_months,
    ),
    _rule(r"the\s+past\s+year|the\s+past\s+twelve\s+months", _fixed(-11, 0)),
    _rule(r"(?:the\s+)?(?:this|current)\s+quarter", _this_quarter),
    _rule(r"(?:the\s+)?(?:last|previous|past|prior)\s+quarter", _last_quarter),
    _rule(
        PHRASES.now_en,
        _fixed(0, 0),
        weak=True,
    ),
)

_EDGE_BEFORE = re.compile(
    r"(?<![\w-])(?:(?:by|at|around|towards?|near|before|until|till)\s+)?(?:the\s+)?(?:very\s+)?"
    r"(?P<e>end|close|beginning|start)\s+of\s+$",
    re.IGNORECASE,
)
_PAST_TENSE = re.compile(r"\b(?:was|were|did|had|has\s+been|have\s+been)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class TimeMatch:
    """A time expression found in a question: its window and character span."""

    window: TimeWindow
    start: int
    end: int


def find_time_match(question: str, reference: Month) -> TimeMatch:
    """Like ``find_time_expression`` but also returns where in the question it was found."""
    past = bool(_PAST_TENSE.search(question))
    found: list[tuple[bool, bool, int, int, int, Span]] = []
    folded = question.casefold()
    for rule in _RULES:
        if not may_match_all(rule.needed, folded):
            continue
        for match in rule.pattern.finditer(question):
            try:
                span = rule.resolve(match, reference, past)
            except ValueError:  # "the next 0 months", "the first 13 months of 2022"
                continue
            if span[1] < span[0]:
                continue
            backward = span[1] <= reference
            length = match.end() - match.start()
            found.append((rule.weak, backward, -length, match.start(), match.end(), span))
    if not found:
        raise QuestionError(
            f"no time expression found in {question!r}; say which months you mean",
            suggestions=(
                "next month",
                "next quarter",
                "in the next three months",
                "from February to May 2022",
                "last month",
            ),
        )
    # A match inside a longer one is part of it ("in January" in "in January 2020").
    found = [
        item
        for item in found
        if not any(
            other[3] < item[4] and item[3] < other[4] and -other[2] > -item[2] for other in found
        )
    ]
    # Strong before weak ("now" is the comparison baseline); then a future window before a
    # past one ("compared with last month, will it rise next month?"); then longest, first.
    *_, start, end, (first, last) = min(found, key=lambda item: item[:4])
    # "by the end of Q2 2022", "at the start of the second half of 2022": one edge month.
    edge = _EDGE_BEFORE.search(question, 0, start)
    if edge is not None and first != last:
        first, last = (
            (last, last) if edge.group("e").lower() in ("end", "close") else (first, first)
        )
        start = edge.start()
    expression = question[start:end].strip()
    return TimeMatch(TimeWindow(first, last, expression), start, end)


def find_time_expression(question: str, reference: Month) -> TimeWindow:
    """The month window a question names, relative to the reference month ``reference``.

    Raises ``QuestionError`` when the question names no months.
    """
    return find_time_match(question, reference).window


def _catalog_texts(reference: Month) -> list[str]:
    next_year = reference.year + 1
    texts = [
        "next month",
        "the month after next",
        "next quarter",
        "the next two quarters",
        "next year",
        "the coming year",
        "in the first half of next year",
        "in the second half of next year",
        *(f"in the {ORDINALS[q]} quarter of next year" for q in range(4)),
        "at the beginning of next year",
        "at the end of next year",
        *(f"in the next {NUMBER_WORDS[n - 1]} months" for n in range(2, 13)),
        *(f"over the coming {NUMBER_WORDS[n - 1]} months" for n in range(2, 13)),
        *(f"in the next {n} months" for n in (3, 6, 12)),
        "last month",
        "this month",
        "now",
        "currently",
        "this year",
        "last year",
        "this quarter",
        "last quarter",
        *(f"over the past {NUMBER_WORDS[n - 1]} months" for n in range(2, 13)),
    ]
    for year in (reference.year - 1, reference.year, next_year):
        texts += [f"in {year}", f"at the end of {year}", f"at the beginning of {year}"]
        texts += [f"in Q{q} {year}" for q in range(1, 5)]
        texts += [f"in the {ORDINALS[q]} quarter of {year}" for q in range(4)]
        texts += [f"in the last quarter of {year}"]
        texts += [f"in the first half of {year}", f"in the second half of {year}"]
        texts += [f"in {name} {year}" for name in MONTH_NAMES]
        texts += [f"by {name} {year}" for name in MONTH_NAMES]
        texts += [f"in the first {NUMBER_WORDS[n - 1]} months of {year}" for n in range(2, 12)]
        texts += [f"in the last {NUMBER_WORDS[n - 1]} months of {year}" for n in range(2, 12)]
        for first in range(12):
            for last in range(first + 1, 12):
                texts.append(f"from {MONTH_NAMES[first]} to {MONTH_NAMES[last]} {year}")
                texts.append(f"between {MONTH_NAMES[first]} and {MONTH_NAMES[last]} {year}")
    return texts


def catalog(reference: Month) -> list[TimeWindow]:
    """Canonical expressions with their windows for the dataset builder.

    Forward-looking windows lie within R+1..R+12; past ones within the 24 months up to R
    (R-23..R). Each text round-trips through ``find_time_expression``.
    """
    windows: list[TimeWindow] = []
    seen: set[str] = set()
    for text in _catalog_texts(reference):
        if text in seen:
            continue
        seen.add(text)
        window = find_time_expression(text, reference)
        forward = reference + 1 <= window.first and window.last <= reference + 12
        past = reference - 23 <= window.first and window.last <= reference
        if forward or past:
            windows.append(window)
    return windows
