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


def needed_words(pattern: str, flags: int = 0) -> Words | None:
    """Case-folded strings one of which every match of ``pattern`` contains, else None."""
    try:
        from re import _constants as sre  # type: ignore[attr-defined]
        from re import _parser  # type: ignore[attr-defined]

        tree = _parser.parse(pattern, flags)
        return _sequence(list(tree), sre)
    except Exception:  # an unknown tree shape: no shortcut, the pattern is always scanned
        return None


def may_match(words: Words | None, folded_text: str) -> bool:
    """False only when ``folded_text`` (``str.casefold``-ed) holds none of ``words``."""
    return words is None or any(word in folded_text for word in words)


def _sequence(items: list[tuple[Any, Any]], sre: Any) -> Words | None:
    """The best needed set of a sequence: the smallest among its mandatory elements."""
    candidates: list[Words] = []
    run: list[str] = []  # consecutive literal characters form one needed string
    for op, value in items:
        if op is sre.LITERAL:
            run.append(chr(value))
            continue
        if run:
            candidates.append(frozenset({"".join(run).casefold()}))
            run = []
        found = _element(op, value, sre)
        if found is not None:
            candidates.append(found)
    if run:
        candidates.append(frozenset({"".join(run).casefold()}))
    candidates = [c for c in candidates if c and all(c)]  # an empty string proves nothing
    if not candidates:
        return None
    # Fewest alternatives first, then the longest shortest one: the most selective test.
    return min(candidates, key=lambda words: (len(words), -min(map(len, words))))


def _element(op: Any, value: Any, sre: Any) -> Words | None:
    if op is sre.SUBPATTERN:  # (group, add_flags, del_flags, pattern)
        return _sequence(list(value[-1]), sre)
    if op is sre.ATOMIC_GROUP:
        return _sequence(list(value), sre)
    if op is sre.BRANCH:  # (None, [alternatives]): every alternative must need something
        return _union(_sequence(list(branch), sre) for branch in value[1])
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        low, _high, item = value
        return _sequence(list(item), sre) if low >= 1 else None
    return None  # a class, any character, an assertion, a back reference: no literal known


def _union(parts: Iterable[Words | None]) -> Words | None:
    out: set[str] = set()
    for part in parts:
        if part is None:
            return None
        out |= part
    return frozenset(out)
