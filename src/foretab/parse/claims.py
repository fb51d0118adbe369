"""Spans of a question claimed by the planner's passes.

Every pass (entities, time, measure, family cues, filler words) reads the question with the
spans claimed before it masked out, and adds the spans it consumed. What no pass claimed is
read last (``parse.leftover``): a part that changes the meaning is refused by name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from foretab.parse.needed import Clauses, may_match_all, needed_clauses


class Pass(StrEnum):
    """The pass that claimed a span."""

    ENTITY = "entity"
    TIME = "time"
    MEASURE = "measure"
    CUE = "cue"
    FILLER = "filler"


@dataclass(frozen=True, slots=True)
class Span:
    """Characters ``[start, end)`` of the question, claimed by ``by`` as ``what``."""

    start: int
    end: int
    by: Pass
    what: str = ""


@dataclass(frozen=True, slots=True)
class Claims:
    """The spans claimed so far, in the order the passes claimed them."""

    spans: tuple[Span, ...] = ()

    def add(self, spans: Iterable[Span]) -> Claims:
        """These claims plus ``spans`` (empty ones dropped)."""
        return Claims(self.spans + tuple(s for s in spans if s.start < s.end))

    def of(self, *passes: Pass) -> tuple[tuple[int, int], ...]:
        """The (start, end) pairs claimed by ``passes`` (every pass when none is given)."""
        return tuple((s.start, s.end) for s in self.spans if not passes or s.by in passes)

    def overlaps(self, start: int, end: int) -> bool:
        """True when any claimed span shares a character with ``[start, end)``."""
        return any(s.start < end and start < s.end for s in self.spans)

    def covers(self, start: int, end: int) -> bool:
        """True when every character of ``[start, end)`` lies in some claimed span."""
        inside = [(s.start, s.end) for s in self.spans if s.start < end and start < s.end]
        at = start
        for span_start, span_end in sorted(inside):
            if span_start > at:
                return False
            at = max(at, span_end)
        return at >= end

    def mask(self, text: str, *passes: Pass, fill: str = "#") -> str:
        """``text`` with the claimed characters replaced by ``fill``; length unchanged."""
        chars = list(text)
        for start, end in self.of(*passes):
            for i in range(max(start, 0), min(end, len(chars))):
                chars[i] = fill
        return "".join(chars)


def claim_matches(
    patterns: Iterable[tuple[re.Pattern[str], str]], text: str, by: Pass
) -> tuple[Span, ...]:
    """A span for every match of every ``(pattern, what)`` in ``text`` (a masked question).

    A pattern whose needed words (``parse.needed``) are all absent is not scanned: the
    measure and cue passes hold hundreds of patterns, and most of them cannot match.
    """
    folded = text.casefold()
    return tuple(
        Span(m.start(), m.end(), by, what)
        for pattern, what in patterns
        if may_match_all(_needed(pattern), folded)
        for m in pattern.finditer(text)
        if m.end() > m.start()
    )


@lru_cache(maxsize=4096)
def _needed(pattern: re.Pattern[str]) -> Clauses | None:
    return needed_clauses(pattern.pattern, pattern.flags)
