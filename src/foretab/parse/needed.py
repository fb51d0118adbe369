"""Words a regular expression cannot match without: a cheap test before a costly scan.

``needed_words(pattern)`` is a set of case-folded strings such that every match of
``pattern`` contains at least one of them (or ``None`` where no such set is known). A text
that holds none of them cannot match, so the scan can be skipped: the time-expression
rules (``parse.timexpr``, 54 patterns over every question, ~0.6 ms a question) test their
words first. The set is read off the pattern's own parse tree, so it stays exact when a
pattern changes; a tree this module does not understand gives ``None`` (always scan).

The parse tree is the standard library's ``re._parser`` (CPython's own, stable across
3.11–3.13); if it is missing or changes shape, every pattern simply gets ``None``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Words = frozenset[str]
Clauses = tuple[Words, ...]


def needed_words(pattern: str, flags: int = 0) -> Words | None:
    """Case-folded strings one of which every match of ``pattern`` contains, else None.

    The most selective of ``needed_clauses``.
    """
    clauses = needed_clauses(pattern, flags)
    return clauses[0] if clauses else None


def needed_clauses(pattern: str, flags: int = 0) -> Clauses | None:
    """Sets of case-folded strings every match of ``pattern`` holds one of *each* of.

    Most selective first; None where nothing is known (``may_match_all`` then says yes).
    A rule such as "a month name, then a year" needs both: testing one set alone lets every
    question with a month name through.
    """
    try:
        from re import _constants as sre  # type: ignore[attr-defined]
        from re import _parser  # type: ignore[attr-defined]

        tree = _parser.parse(pattern, flags)
        clauses = _sequence(list(tree), sre)
    except Exception:  # an unknown tree shape: no shortcut, the pattern is always scanned
        return None
    return tuple(sorted(dict.fromkeys(clauses), key=_selectivity)) if clauses else None


def may_match(words: Words | None, folded_text: str) -> bool:
    """False only when ``folded_text`` (``str.casefold``-ed) holds none of ``words``."""
    return words is None or any(word in folded_text for word in words)


def may_match_all(clauses: Clauses | None, folded_text: str) -> bool:
    """False only when ``folded_text`` holds none of the strings of one of ``clauses``."""
    if clauses is None:
        return True
    for words in clauses:  # plain loops: nested generators cost more than the tests
        for word in words:
            if word in folded_text:
                break
        else:
            return False
    return True


#: Literal strings a run of literals and small classes (``h[12]``) expands to, at most.
_MAX_EXPANSIONS = 16


def _selectivity(words: Words) -> tuple[int, int]:
    # Fewest alternatives first, then the longest shortest one.
    return (len(words), -min(map(len, words)))


def _sequence(items: list[tuple[Any, Any]], sre: Any) -> list[Words]:
    """Every needed set of a sequence: one per mandatory element (an empty list: none)."""
    clauses: list[Words] = []
    runs = [""]  # consecutive literal characters (and small classes) form needed strings

    def flush() -> None:
        nonlocal runs
        if runs != [""]:
            clauses.append(frozenset(run.casefold() for run in runs))
        runs = [""]

    for op, value in items:
        chars = _characters(op, value, sre)
        if chars is not None and len(runs) * len(chars) <= _MAX_EXPANSIONS:
            runs = [run + char for run in runs for char in chars]
            continue
        flush()
        clauses += _element(op, value, sre)
    flush()
    return [c for c in clauses if c and all(c)]  # an empty string proves nothing


def _characters(op: Any, value: Any, sre: Any) -> list[str] | None:
    """The characters one element matches exactly one of: a literal or a class of literals."""
    if op is sre.LITERAL:
        return [chr(value)]
    if op is sre.IN and value and all(item_op is sre.LITERAL for item_op, _ in value):
        return sorted({chr(code) for _, code in value})
    if op is sre.SUBPATTERN and len(value[-1]) == 1:  # a group of one: "(?P<h>[12])"
        (inner_op, inner_value), *_ = list(value[-1])
        return _characters(inner_op, inner_value, sre)
    return None


def _element(op: Any, value: Any, sre: Any) -> list[Words]:
    if op is sre.SUBPATTERN:  # (group, add_flags, del_flags, pattern)
        return _sequence(list(value[-1]), sre)
    if op is sre.ATOMIC_GROUP:
        return _sequence(list(value), sre)
    if op is sre.BRANCH:  # (None, [alternatives]): every alternative must need something
        union = _union(_sequence(list(branch), sre) for branch in value[1])
        return [] if union is None else [union]
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        low, _high, item = value
        return _sequence(list(item), sre) if low >= 1 else []
    return []  # a class, any character, an assertion, a back reference: no literal known


def _union(parts: Iterable[list[Words]]) -> Words | None:
    """One needed set of alternatives: the most selective set of each, together."""
    out: set[str] = set()
    for part in parts:
        if not part:
            return None
        out |= min(part, key=_selectivity)
    return frozenset(out)
