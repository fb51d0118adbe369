"""The planner's words that come from the store's corpus schema, not from the code.

``parse.vocabulary`` holds the question language (cue words, filler, time words); a corpus
adds the words for its own levels and measures ("stock", "ticker", "股价", "closing price")
and says what it can answer, for refusals. The default schema (real estate) adds nothing
the vocabulary does not already read, so its questions parse as before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache

from foretab.core.plan import Metric, Wording, default_wording
from foretab.corpus.schema import CorpusSchema, Refusal, default_schema
from foretab.parse import vocabulary as vocab

Patterns = tuple[tuple[re.Pattern[str], str], ...]


@dataclass(frozen=True, slots=True)
class Lexicon:
    """Measure patterns, extra filler words and what-can-be-answered texts of one corpus."""

    measures_en: Patterns
    measures_zh: Patterns
    filler_en: frozenset[str]
    filler_zh: frozenset[str]
    zh_words: tuple[str, ...]  # kept whole by the Chinese segmenter
    can_answer: str
    can_answer_zh: str
    # (pattern, what was asked) of questions about things the store does not hold
    refusals_en: Patterns = ()
    refusals_zh: Patterns = ()
    example: str = ""  # a question the store answers, for suggestions
    wording: Wording = field(default_factory=default_wording)

    @classmethod
    def of(cls, schema: CorpusSchema) -> Lexicon:
        roles = [(schema.primary, Metric.VALUE)]
        if schema.summed is not None:
            roles.append((schema.summed, Metric.UNITS))
        en = [(m.en, m.metric.value) for m in vocab.MEASURES]
        zh = [(m.zh, m.metric.value) for m in vocab.MEASURES]
        for measure, metric in roles:
            words_en = [measure.name, *measure.synonyms_en]
            en.append((_alternatives(words_en, word_bounds=True), metric.value))
            words_zh = [w for w in (measure.name_zh, measure.short_zh, *measure.synonyms_zh) if w]
            if words_zh:
                zh.append((_alternatives(words_zh, word_bounds=False), metric.value))
        known = vocab.QUESTION_WORDS | vocab.FILLER_EN
        known_zh = vocab.FILLER_ZH | set(vocab.ZH_WORDS) | set(vocab.ZH_PLACE_LEVELS)
        return cls(
            measures_en=tuple((re.compile(p), what) for p, what in en),
            measures_zh=tuple((re.compile(p), what) for p, what in zh),
            # Only words the vocabulary does not read already: a default-schema question
            # parses exactly as before.
            filler_en=schema.words_en - known,
            # Two characters or more: a lone 区 or 股 is part of a name as often as not.
            filler_zh=frozenset(w for lv in schema.levels for w in lv.words_zh if len(w) > 1)
            - known_zh,
            zh_words=schema.words_zh,
            can_answer=f"foretab answers {schema.answers}, past and forecast",
            can_answer_zh=f"foretab 可回答{schema.answers_in_chinese}，包括历史与预测",
            refusals_en=_refusals(schema.phrasing.refusals_en),
            refusals_zh=_refusals(schema.phrasing.refusals_zh),
            example=_example(schema),
            wording=Wording.of(schema),
        )


def _refusals(refusals: Iterable[Refusal]) -> Patterns:
    return tuple((re.compile(r.pattern), r.what) for r in refusals)


def _example(schema: CorpusSchema) -> str:
    """A question the store answers ("What will the price of P in District, City be …?")."""
    places = ", ".join(level.name.title() for level in reversed(schema.groups))
    where = f" in {places}" if places else ""
    return f"What will the {schema.primary.name} of P{where} be next month?"


def _alternatives(words: Iterable[str], *, word_bounds: bool) -> str:
    ordered = sorted({w.lower() for w in words if w}, key=len, reverse=True)
    body = "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in ordered)
    return rf"\b(?:{body})\b" if word_bounds else f"(?:{body})"


@cache
def default_lexicon() -> Lexicon:
    """The real-estate schema's lexicon (plans parsed without a store's schema)."""
    return Lexicon.of(default_schema())
