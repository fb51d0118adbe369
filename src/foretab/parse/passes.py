"""The planner's passes over one tokenised question, each claiming the spans it consumed.

1. ``entity_pass``: exact names of projects, districts and cities;
2. ``time_pass``: the time expression, read with the names masked out;
3. ``link_pass``: the names resolved (fuzzy leftovers, scope), with the time masked out;
4. ``measure_pass``: the measure words (price, units sold);
5. ``cue_pass``: the family cue words (rise / fall, most, mean, each month, thresholds, …);
6. ``filler_pass``: words with no meaning of their own.

Each takes the previous pass's result and returns a frozen one carrying the claims so far;
what is left unclaimed is refused by ``parse.leftover``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from foretab.core.months import Month
from foretab.core.plan import Metric, TimeWindow
from foretab.errors import QuestionError
from foretab.parse import vocabulary as vocab
from foretab.parse.claims import Claims, Pass, Span, claim_matches
from foretab.parse.entities import EntityIndex, Linked, Mention
from foretab.parse.families import WEIGHTED_EN, WEIGHTED_ZH
from foretab.parse.lexicon import Lexicon, default_lexicon
from foretab.parse.phrases import PHRASES
from foretab.parse.question import Question
from foretab.parse.timexpr import find_time_match
from foretab.parse.zh_time import find_zh_time


@dataclass(frozen=True, slots=True)
class Found:
    """Pass 1: the exact name mentions."""

    question: Question
    mentions: tuple[Mention, ...]
    claims: Claims


@dataclass(frozen=True, slots=True)
class Timed:
    """Pass 2: the time expression (None when the question names no months)."""

    found: Found
    window: TimeWindow | None
    span: tuple[int, int] | None
    claims: Claims


@dataclass(frozen=True, slots=True)
class Resolved:
    """Pass 3: the resolved entities."""

    timed: Timed
    linked: Linked
    claims: Claims


@dataclass(frozen=True, slots=True)
class Measured:
    """Pass 4: the measure the question asks about."""

    entities: Resolved
    metric: Metric
    claims: Claims


def entity_pass(question: Question, index: EntityIndex) -> Found:
    """Claim the exact mentions of catalog names."""
    mentions = tuple(index.find_mentions(question.text, read=question))
    spans = (Span(m.start, m.end, Pass.ENTITY, m.kind.value) for m in mentions)
    return Found(question, mentions, Claims().add(spans))


def time_pass(found: Found, reference: Month) -> Timed:
    """Claim the time expression, read with the names masked out."""
    masked = found.claims.mask(found.question.text)
    window, span = _time(masked, reference, found.question.zh)
    if window is None or span is None:
        return Timed(found, None, None, found.claims)
    window = TimeWindow(
        window.first, window.last, found.question.text[span[0] : span[1]].strip(), window.only
    )
    return Timed(found, window, span, found.claims.add([Span(*span, Pass.TIME, "time")]))


def _time(
    masked: str, reference: Month, zh: bool
) -> tuple[TimeWindow | None, tuple[int, int] | None]:
    if zh:
        found = find_zh_time(zh_year_digits(masked), reference)
        return (found.window, (found.start, found.end)) if found else (None, None)
    try:
        match = find_time_match(masked, reference)
    except QuestionError:
        return None, None
    return match.window, (match.start, match.end)


_ZH_DIGITS = str.maketrans("〇零一二三四五六七八九", "00123456789")
_ZH_YEAR = re.compile(r"[〇零一二三四五六七八九]{4}(?=年)")


def zh_year_digits(text: str) -> str:
    """二〇二一年 → 2021年: the same length, so the time span's offsets stay the question's."""
    return _ZH_YEAR.sub(lambda m: m.group().translate(_ZH_DIGITS), text)


# "which city", "哪个城市": the outer level ranked, every outer group the subject when
# no place is named.
OUTER_RANK_EN = re.compile(PHRASES.outer_rank_en or r"(?!)")
OUTER_RANK_ZH = re.compile(PHRASES.outer_rank_zh or r"(?!)")
_OUTER_NOUN_EN = re.compile(
    rf"(?:\b\d+\s+)?\b(?:{PHRASES.outer_noun_en or '(?!)'})\b", re.IGNORECASE
)


def link_pass(timed: Timed, index: EntityIndex) -> Resolved:
    """Resolve the names (fuzzy leftovers, places), the time expression masked out."""
    found = timed.found
    text = found.question.text
    ignore = [timed.span] if timed.span else []
    every_outer = bool((OUTER_RANK_ZH if found.question.zh else OUTER_RANK_EN).search(text.lower()))
    if every_outer and not found.mentions:
        # "the 3 cities with ...": the level's word (and its count) is no project's name
        ignore += [m.span() for m in _OUTER_NOUN_EN.finditer(text)]
    linked = index.resolve(
        text,
        found.mentions,
        ignore=ignore,
        allow_no_entity=True,
        every_outer=every_outer,
        read=found.question,
    )
    spans = (Span(start, end, Pass.ENTITY, "name") for start, end in linked.spans)
    return Resolved(timed, linked, timed.claims.add(spans))


# "selling price" / "sales prices" name the price, not the units sold.
_VALUE_NOT_UNITS = re.compile(PHRASES.value_not_units_en)


def measure_pass(entities: Resolved, lexicon: Lexicon | None = None) -> Measured:
    """Claim the measure words; units when the question asks about sales, else the price.

    The words are the vocabulary's and the corpus schema's (``lexicon``).
    """
    question = entities.timed.found.question
    lexicon = lexicon or default_lexicon()
    patterns = lexicon.measures_zh if question.zh else lexicon.measures_en
    text = entities.claims.mask(question.text).lower()
    spans = (
        *claim_matches(patterns, text, Pass.MEASURE),
        *_whole(question, patterns, Pass.MEASURE),
    )
    units = any(s.what == Metric.UNITS.value for s in spans)
    if units and not question.zh and _VALUE_NOT_UNITS.search(text):
        units = False
    weights = [m.span() for m in (WEIGHTED_ZH if question.zh else WEIGHTED_EN).finditer(text)]
    if units and all(
        any(a <= s.start and s.end <= b for a, b in weights)
        for s in spans
        if s.what == Metric.UNITS.value
    ):
        units = False  # "weighted by units sold": the units weigh the price asked about
    metric = Metric.UNITS if units else Metric.VALUE
    return Measured(entities, metric, entities.claims.add(spans))


def _whole(
    question: Question, patterns: Sequence[tuple[re.Pattern[str], str]], by: Pass
) -> tuple[Span, ...]:
    """Chinese words that are a cue as a whole ("价格" in "平均价格", after "均价" matched).

    English words are not read alone: their expressions look around them ("sell for").
    """
    if not question.zh:
        return ()
    return tuple(
        Span(s.start, s.end, by, what)
        for s in question.segments
        for pattern, what in patterns
        if pattern.fullmatch(s.text.lower())
    )


def cue_pass(measured: Measured, patterns: Sequence[tuple[re.Pattern[str], str]]) -> Claims:
    """Claim the family cue words (``patterns``: the family readers' own expressions).

    Read, as the family readers read it, with only the names and the time masked out: a
    cue may share characters with a measure word ("平均价格", "最贵").
    """
    question = measured.entities.timed.found.question
    text = measured.claims.mask(question.text, Pass.ENTITY, Pass.TIME).lower().replace("’", "'")
    spans = (*claim_matches(patterns, text, Pass.CUE), *_whole(question, patterns, Pass.CUE))
    return measured.claims.add(spans)


def filler_pass(question: Question, claims: Claims, lexicon: Lexicon | None = None) -> Claims:
    """Claim the words that carry no meaning of their own (articles, "please", 请问, …).

    Also the corpus's level words ("stock", "ticker"): the entity they name is the claim.
    """
    lexicon = lexicon or default_lexicon()
    if question.zh:
        filler = vocab.FILLER_ZH | lexicon.filler_zh
    else:
        filler = vocab.FILLER_EN | lexicon.filler_en
    return claims.add(
        Span(s.start, s.end, Pass.FILLER, "filler")
        for s in question.segments
        if s.text.lower() in filler
    )
