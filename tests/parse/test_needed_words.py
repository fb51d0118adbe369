"""The time rules' word shortcut (parse/needed.py) never skips a rule that would match."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from foretab.core.months import Month
from foretab.errors import QuestionError
from foretab.parse import timexpr
from foretab.parse.needed import may_match, may_match_all, needed_clauses, needed_words

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "questions"
R = Month(2021, 12)


def _questions() -> list[str]:
    """Every question the repository's question sets hold, and the builder's time phrases."""
    out: list[str] = []
    for name in ("analyst_compose", "analyst_en", "analyst_mixed", "lead_paraphrases",
                 "robustness_set"):  # fmt: skip
        out += [item["question"] for item in json.loads((FIXTURES / f"{name}.json").read_text())]
    for dialogue in json.loads((FIXTURES / "dialogues.json").read_text()):
        out += [turn["say"] for turn in dialogue["turns"]]
    for line in (FIXTURES / "plans_2021_12.tsv").read_text().splitlines():
        if line and not line.startswith("#"):
            out.append(line.split("\t", 1)[0])
    phrases = [w.expression for w in timexpr.catalog(R)]
    out += phrases + [f"What will the price of X be {p}?" for p in phrases]
    out += [p.upper() for p in phrases]  # case-insensitive rules, upper-case text
    return out


QUESTIONS = _questions()


@pytest.mark.parametrize(
    ("pattern", "words"),
    [
        ("abc", {"abc"}),
        ("a|bc", {"a", "bc"}),
        ("(?:in\\s+)?next\\s+month", {"month"}),  # the optional part proves nothing
        ("x*y", {"y"}),
        ("[ab]c", {"ac", "bc"}),  # a class of a few characters extends the string
        ("h[12]\\s", {"h1", "h2"}),
        ("(?P<h>[12])h", {"1h", "2h"}),  # a group of one class
        ("[a-c]x", {"x"}),  # a range is not expanded
        ("ABC", {"abc"}),  # case-folded, like the text it is tested against
        ("(?:x|[0-9])z", {"z"}),  # one alternative without a literal: the other element
        ("(?:x|[0-9])", None),
        ("\\d+", None),
    ],
)
def test_needed_words(pattern: str, words: set[str] | None) -> None:
    expected = None if words is None else frozenset(words)
    assert needed_words(pattern) == expected
    found = needed_words(pattern)
    for text in ("abc", "xy", "bc", "next month", "XZ", "7", "in the next month"):
        if re.search(pattern, text, re.IGNORECASE):
            assert may_match(found, text.casefold()), (pattern, text)


@pytest.mark.parametrize(
    ("pattern", "clauses"),
    [
        ("(?:jan|feb)\\s+20\\d\\d", [{"20"}, {"jan", "feb"}]),  # both are needed
        ("(?:in\\s+)?next\\s+(?:month|year)", [{"next"}, {"month", "year"}]),
        ("a(?:b|\\d)c", [{"a"}, {"c"}]),
        ("\\d+", None),
    ],
)
def test_needed_clauses_are_all_needed(pattern: str, clauses: list[set[str]] | None) -> None:
    expected = None if clauses is None else tuple(frozenset(c) for c in clauses)
    assert needed_clauses(pattern) == expected
    for text in ("jan 2021", "feb 1999", "in the next year", "abc", "a7c", "next month"):
        if re.search(pattern, text, re.IGNORECASE):
            assert may_match_all(expected, text.casefold()), (pattern, text)
    assert not may_match_all(needed_clauses("(?:jan|feb)\\s+20\\d\\d"), "jan 1999")


def test_every_rule_has_words_and_none_skips_a_match() -> None:
    assert all(rule.needed is not None for rule in timexpr._RULES)
    checked = 0
    for question in QUESTIONS:
        folded = question.casefold()
        for rule in timexpr._RULES:
            if rule.pattern.search(question):
                checked += 1
                assert may_match_all(rule.needed, folded), (question, rule.pattern.pattern[:80])
    assert checked > 1_000


def test_time_matches_are_those_of_a_full_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    def find(question: str) -> object:
        try:
            return timexpr.find_time_match(question, R)
        except QuestionError as error:
            return str(error)

    fast = [find(q) for q in QUESTIONS]
    scan_all = tuple(dataclasses.replace(rule, needed=None) for rule in timexpr._RULES)
    monkeypatch.setattr(timexpr, "_RULES", scan_all)
    assert [find(q) for q in QUESTIONS] == fast
