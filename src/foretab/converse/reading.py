"""What a follow-up names, slot by slot: ``read_follow_up`` (docs/design.md §4.3).

The follow-up is read by the planner's own passes (names, time, measure) plus the
follow-up words of its language (``converse.en`` / ``converse.zh``); every span must be
claimed by one of them or be filler. A word left over changes the meaning in a way no slot
records, so it is refused by name — the meaning check of docs/design.md §4.2, for follow-ups.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from foretab.converse import en, zh
from foretab.converse.words import FollowUpWords
from foretab.core.months import Month
from foretab.core.plan import EntityRef, Extreme, Language, Metric, ScopeRef, TimeWindow
from foretab.errors import AmbiguousEntityError, QuestionError
from foretab.parse.claims import Pass, Span
from foretab.parse.entities import EntityIndex, Linked
from foretab.parse.lexicon import Lexicon
from foretab.parse.passes import Resolved, entity_pass, link_pass, measure_pass, time_pass
from foretab.parse.question import read_question

_NO_NAMES = Linked((), (), (), ())


@dataclass(frozen=True, slots=True)
class StoreWords:
    """What a follow-up is read with: the store's entity index, lexicon and "now"."""

    index: EntityIndex
    lexicon: Lexicon
    reference: Month


@dataclass(frozen=True, slots=True)
class Reading:
    """The slots a follow-up names; ``None`` / ``False`` / empty: carried over."""

    text: str
    language: Language
    entities: tuple[EntityRef, ...] = ()
    places: tuple[ScopeRef, ...] = ()
    #: a name that is several entities: one clarifying choice each
    ambiguous: AmbiguousEntityError | None = None
    #: "compared with X" / 和X比: X joins the subjects instead of replacing them
    add: bool = False
    window: TimeWindow | None = None
    metric: Metric | None = None
    metric_word: str = ""
    extreme: Extreme | None = None
    extreme_word: str = ""
    relative: bool = False
    relative_word: str = ""
    last_year: bool = False
    last_year_word: str = ""
    mean: bool = False
    each: bool = False

    @property
    def zh(self) -> bool:
        return self.language is Language.ZH

    @property
    def names_subject(self) -> bool:
        return bool(self.entities or self.places or self.ambiguous)


def words_of(zh_: bool) -> FollowUpWords:
    """The follow-up words of Chinese (``zh_``) or English."""
    return zh.WORDS if zh_ else en.WORDS


def read_follow_up(text: str, store: StoreWords) -> Reading:
    """Read ``text`` as a follow-up: the slots it names, or a refusal naming a word it cannot place."""
    index = store.index
    read = read_question(text, index.segmenter)
    words = words_of(read.zh)
    own: list[Span] = []
    last_year = words.last_year.search(text)
    if last_year:
        own.append(Span(last_year.start(), last_year.end(), Pass.CUE, "last_year"))
    add = None if last_year else words.add_subject.search(text)
    if add:
        own.append(Span(add.start(), add.end(), Pass.CUE, "add"))
    # The names and the time are read with the follow-up's own markers blanked out, so
    # "last year" of "compared with last year" is not read as the window 2020.
    blanked = _blank(text, [(s.start, s.end) for s in own])
    read = read_question(blanked, index.segmenter)
    timed = time_pass(entity_pass(read, index), store.reference)
    # The measure and the follow-up's cue words first: what is left after them and the
    # filler is a name to link ("换成销量" names none; "what about Crystal Palace?" does).
    measured = measure_pass(Resolved(timed, _NO_NAMES, timed.claims), store.lexicon)
    measure_spans = [s for s in measured.claims.spans if s.by is Pass.MEASURE]
    cue_text = timed.claims.mask(blanked).lower()
    found: dict[str, re.Match[str] | None] = {
        name: getattr(words, name).search(cue_text)
        for name in ("lowest", "highest", "percent", "mean", "each")
    }
    cues = [Span(m.start(), m.end(), Pass.CUE, name) for name, m in found.items() if m is not None]
    claims = measured.claims.add(own).add(cues)
    ambiguous: AmbiguousEntityError | None = None
    linked = _NO_NAMES
    if timed.found.mentions or _name_like(claims.mask(blanked), words):
        try:
            resolved = link_pass(timed, index)
            linked = resolved.linked
            claims = claims.add(s for s in resolved.claims.spans if s.by is Pass.ENTITY)
        except AmbiguousEntityError as error:
            if not error.candidates:  # a fuzzy near-tie: no exact name to offer choices of
                raise
            ambiguous = error
            claims = claims.add([Span(error.start, error.end, Pass.ENTITY, "name")])
    _refuse_leftover(claims.mask(text, fill=" "), words, read.zh)
    lowest, highest = found["lowest"], found["highest"]
    if lowest and highest:
        raise QuestionError(
            "这个追问同时说了最高和最低；请只说一个" if read.zh
            else "the follow-up says both highest and lowest; say one"
        )  # fmt: skip
    extreme_match = lowest or highest
    units = measured.metric is Metric.UNITS
    return Reading(
        text=text,
        language=Language.ZH if read.zh else Language.EN,
        entities=linked.entities,
        places=_places(index, linked),
        ambiguous=ambiguous,
        add=bool(add),
        window=timed.window,
        metric=(Metric.UNITS if units else Metric.VALUE) if measure_spans else None,
        metric_word=text[measure_spans[0].start : measure_spans[0].end] if measure_spans else "",
        extreme=None if extreme_match is None else (Extreme.LOWEST if lowest else Extreme.HIGHEST),
        extreme_word=extreme_match.group() if extreme_match else "",
        relative=found["percent"] is not None,
        relative_word=found["percent"].group() if found["percent"] else "",
        last_year=bool(last_year),
        last_year_word=last_year.group() if last_year else "",
        mean=found["mean"] is not None,
        each=found["each"] is not None,
    )


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    chars = list(text)
    for start, end in spans:
        for i in range(start, end):
            chars[i] = " "
    return "".join(chars)


_CAPITAL = re.compile(r"(?<![\w'])[A-Z][\w'’&-]*")


def _name_like(masked: str, words: FollowUpWords) -> bool:
    """A capitalised word that is not a follow-up word: a name to link (or to refuse as unknown)."""
    left = words.filler.sub(" ", masked)
    return bool(_CAPITAL.search(left)) or bool(re.search(r"[\u4e00-\u9fff]", left))


def _refuse_leftover(masked: str, words: FollowUpWords, zh_: bool) -> None:
    left = " ".join(words.filler.sub(" ", masked).split())
    if not left:
        return
    if zh_:
        raise QuestionError(
            f"追问里的“{left}”不是能换掉的部分（项目、地区、指标、时间或最高/最低）；请完整地问一遍"
        )
    raise QuestionError(
        f"the follow-up's '{left}' is not a part of the previous question that can be changed "
        "(a name, a place, the measure, the time, highest / lowest, percent); ask the whole "
        "question instead"
    )


def _places(index: EntityIndex, linked: Linked) -> tuple[ScopeRef, ...]:
    if linked.entities:
        return ()
    out = [ScopeRef(o, i, index.inner_zh.get((o, i), "")) for o, i in linked.inners]
    for outer in linked.outers:
        if not any(ref.outer == outer for ref in out):
            out.append(ScopeRef(outer, None, index.outer_zh.get(outer, "")))
    return tuple(out)
