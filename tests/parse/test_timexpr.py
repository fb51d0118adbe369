"""Every catalogued time expression, with windows computed independently of the parser."""

from __future__ import annotations

import pytest

from foretab.core.months import Month
from foretab.errors import QuestionError
from foretab.parse.timexpr import catalog, find_time_expression

WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve"]  # fmt: skip
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]  # fmt: skip
ORD = {"first": 1, "second": 2, "third": 3, "fourth": 4, "last": 4}


def m(index: int) -> tuple[int, int]:
    """(year, month) of a month index counted as year * 12 + month - 1."""
    return index // 12, index % 12 + 1


def expected(text: str, ref: tuple[int, int]) -> tuple[tuple[int, int], tuple[int, int]]:
    """The window of a catalogued expression, by plain string handling (no regexes)."""
    year, month = ref
    r = year * 12 + month - 1
    q_start = year * 12 + (month - 1) // 3 * 3  # index of the first month of R's quarter
    words = text.split()
    if words[0] in ("in", "by", "at", "over"):
        words = words[1:]
    t = " ".join(words)
    if t.endswith("next year") and t != "next year":
        y = year + 1
        words = [*words[:-2], str(y)]
        t = " ".join(words)
    fixed = {
        "next month": (r + 1, r + 1),
        "the month after next": (r + 2, r + 2),
        "next quarter": (q_start + 3, q_start + 5),
        "the next two quarters": (q_start + 3, q_start + 8),
        "next year": ((year + 1) * 12, (year + 1) * 12 + 11),
        "the coming year": ((year + 1) * 12, (year + 1) * 12 + 11),
        "last month": (r - 1, r - 1),
        "this month": (r, r),
        "now": (r, r),
        "currently": (r, r),
        "this year": (year * 12, year * 12 + 11),
        "last year": ((year - 1) * 12, (year - 1) * 12 + 11),
        "this quarter": (q_start, q_start + 2),
        "last quarter": (q_start - 3, q_start - 1),
    }
    if t in fixed:
        a, b = fixed[t]
        return m(a), m(b)
    if words[0] in ("the", "next") and words[-1] == "months" and words[-3] in (
        "next", "coming", "past"):  # fmt: skip
        n = WORDS.index(words[-2]) + 1 if words[-2] in WORDS else int(words[-2])
        if words[-3] == "past":
            return m(r - n + 1), m(r)
        return m(r + 1), m(r + n)
    y = int(words[-1])
    base = y * 12
    if len(words) == 1:
        return m(base), m(base + 11)
    if t.startswith("the end of"):
        return m(base + 11), m(base + 11)
    if t.startswith("the beginning of"):
        return m(base), m(base)
    if words[0].startswith("Q"):
        qn = int(words[0][1])
        return m(base + 3 * qn - 3), m(base + 3 * qn - 1)
    if words[0] in MONTHS:
        k = MONTHS.index(words[0])
        return m(base + k), m(base + k)
    if words[2] == "quarter":
        qn = ORD[words[1]]
        return m(base + 3 * qn - 3), m(base + 3 * qn - 1)
    if words[2] == "half":
        return (m(base), m(base + 5)) if words[1] == "first" else (m(base + 6), m(base + 11))
    if words[0] in MONTHS:
        k = MONTHS.index(words[0])
        return m(base + k), m(base + k)
    if words[0] == "the" and words[-3] == "months":
        n = WORDS.index(words[2]) + 1
        return (
            (m(base), m(base + n - 1)) if words[1] == "first" else (m(base + 12 - n), m(base + 11))
        )
    if words[0] in ("from", "between"):
        return m(base + MONTHS.index(words[1])), m(base + MONTHS.index(words[3]))
    raise AssertionError(f"test does not know {text!r}")


REFERENCES = [Month(2021, 12), Month(2022, 5)]
CASES = [(ref, w.expression) for ref in REFERENCES for w in catalog(ref)]


@pytest.mark.parametrize("reference", REFERENCES)
def test_catalog_has_at_least_98_distinct_expressions(reference: Month) -> None:
    windows = catalog(reference)
    texts = [w.expression for w in windows]
    assert len(set(texts)) == len(texts) >= 98
    forward = [w for w in windows if w.first > reference]
    assert len(forward) >= 98
    assert all(w.last <= reference + 12 for w in forward)


@pytest.mark.parametrize(("reference", "text"), CASES, ids=[f"{r}:{t}" for r, t in CASES])
def test_catalogued_expression(reference: Month, text: str) -> None:
    (fy, fm), (ly, lm) = expected(text, (reference.year, reference.month))
    window = find_time_expression(f"What will the price of X be {text}?", reference)
    assert (window.first, window.last) == (Month(fy, fm), Month(ly, lm))
    assert window.expression == text


@pytest.mark.parametrize(
    ("question", "first", "last"),
    [
        ("What will the average price be in the coming 3 months?", "2022-01", "2022-03"),
        ("price over the next 6 months compared to now", "2022-01", "2022-06"),
        ("in Q3 2022", "2022-07", "2022-09"),
        ("2022 Q2 prices", "2022-04", "2022-06"),
        ("during H2 2022", "2022-07", "2022-12"),
        ("by the end of next year", "2022-12", "2022-12"),
        ("from November 2021 to February 2022", "2021-11", "2022-02"),
        ("What was it from July to September 2021?", "2021-07", "2021-09"),
        ("July to September 2021", "2021-07", "2021-09"),
        ("What was the price in March?", "2021-03", "2021-03"),
        ("What will the price be in March?", "2022-03", "2022-03"),
        ("from February to May", "2022-02", "2022-05"),
        ("next year's first quarter", "2022-01", "2022-03"),
        ("in 2022-03", "2022-03", "2022-03"),
        ("Mar. 2022", "2022-03", "2022-03"),
        ("sept 2022", "2022-09", "2022-09"),
        ("in the final quarter of 2022", "2022-10", "2022-12"),
        ("the next half year", "2022-01", "2022-06"),
        ("in the latter half of next year", "2022-07", "2022-12"),
        ("in the first month of next year", "2022-01", "2022-01"),
        ("over the last 3 months", "2021-10", "2021-12"),
        ("so far this year", "2021-01", "2021-12"),
        ("the past year", "2021-01", "2021-12"),
        ("Will it be higher next month than now?", "2022-01", "2022-01"),
        ("Compared with the current price, next quarter?", "2022-01", "2022-03"),
        ("March of next year", "2022-03", "2022-03"),
        ("between Apr and Sep 2022", "2022-04", "2022-09"),
        ("the following month", "2022-01", "2022-01"),
        ("in the upcoming twelve months", "2022-01", "2022-12"),
        ("at present", "2021-12", "2021-12"),
    ],
)
def test_paraphrases(question: str, first: str, last: str) -> None:
    window = find_time_expression(question, Month(2021, 12))
    assert (window.first.iso, window.last.iso) == (first, last)


def test_next_quarter_is_the_next_calendar_quarter() -> None:
    assert find_time_expression("next quarter", Month(2022, 2)).first == Month(2022, 4)
    assert find_time_expression("next quarter", Month(2022, 3)).last == Month(2022, 6)
    assert find_time_expression("next month", Month(2022, 12)).first == Month(2023, 1)


def test_may_as_a_verb_is_not_a_month() -> None:
    window = find_time_expression("Prices may rise next month", Month(2021, 12))
    assert window.expression == "next month"


def test_no_time_expression_is_an_error() -> None:
    with pytest.raises(QuestionError, match="no time expression"):
        find_time_expression("What is the price of Poly Central Park?", Month(2021, 12))
