"""Question → ``Plan``: entities, time window, then meaning from cue words.

No whole-question templates: the parser finds the projects (``entities``) and the month
window (``timexpr``), masks both out, and reads the remaining words for cues:

* comparison: "which/whose/will A or B" + rise/fall words (+ "most/bigger/larger/faster")
  or highest/lowest words; a single project with rise/fall words is "vs current";
* aggregate: "mean"/"average of ..."/"on average" → MEAN (a bare "average price" names
  the measure, not an aggregate), highest/maximum/peak → MAX, lowest/minimum → MIN,
  "each month"/"monthly"/"month by month" → EACH;
* measure: "percentage"/"percent"/"rate"/"relative change" → RELATIVE.

Phrasings normalised first (``_REWRITES``): polite requests ("could you tell me ...") are
not yes/no questions; "cost the most" / "worth more" / "more valuable" name price levels;
"how high will it go" / "at most" / "high point" ask for the window's extreme;
"become cheaper" / "be up" are changes; "compared with / relative to / measured against"
read as "versus", and "versus now" with one project (or with a comparative, for several)
compares each target with its current price. A yes/no question may open any clause
("Compared with now, will X ...?") but not one inside a wh-question.

Task: HISTORY when the window ends at or before R, else REASONING for categorical
questions and FORECAST for numeric ones. Aggregate defaults: a one-month window → VALUE;
a longer window without an aggregate word → EACH (numeric) or MEAN (reasoning).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from foretab.core.plan import (
    Aggregate,
    ChangeMeasure,
    Comparison,
    EntityRef,
    Extreme,
    Language,
    Metric,
    Plan,
    ScopeRef,
    Task,
    TimeWindow,
    Wording,
    default_wording,
)
from foretab.errors import QuestionError, UnknownEntityError
from foretab.months import Month
from foretab.parse import vocabulary as vocab
from foretab.parse.claims import Pass
from foretab.parse.entities import EntityIndex, Linked, Mention, MentionKind
from foretab.parse.families import (
    CUE_PATTERNS_EN,
    CUE_PATTERNS_ZH,
    Cues,
    extreme_of,
    read_cues,
    scope_query_of,
)
from foretab.parse.leftover import refuse_unclaimed
from foretab.parse.lexicon import Lexicon, default_lexicon
from foretab.parse.passes import (
    Timed,
    cue_pass,
    entity_pass,
    filler_pass,
    link_pass,
    measure_pass,
    time_pass,
)
from foretab.parse.phrases import PHRASES
from foretab.parse.question import Question, read_question
from foretab.parse.refuse import check_refusals

_CURRENT = (
    r"(?:(?:at|as\s+of|what\s+(?:it|they)\s+(?:is|are|costs?)|(?:it|they)\s+(?:is|are|costs?|does|do))\s+)?"
    r"(?:(?:its|their|the|today's|todays|present|current|now)\s+)*"
    r"(?:current|present|presently|now|today|the\s+moment|this\s+month)"
)
# Rewrites before cue reading: fixed phrases whose words would read as other cues.
_REWRITES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (r"\b(?:more|most)\s+expensive\b", " pricier "),
        (r"\b(?:less|least)\s+expensive\b", " cheaper "),
        (r"\bmore\s+affordable\b", " cheaper "),
        # "cost the most", "sell for the least", "be worth more": price levels.
        (r"\b(?:cost|costs|costing|sell\s+for|sells\s+for|selling\s+for|go\s+for|goes\s+for"
         r"|worth|valued)\s+(?:the\s+)?most\b|\bmost\s+valuable\b", " priciest "),
        (r"\b(?:cost|costs|costing|sell\s+for|sells\s+for|selling\s+for|go\s+for|goes\s+for"
         r"|worth|valued)\s+(?:the\s+)?least\b|\bleast\s+valuable\b", " cheapest "),
        (r"\b(?:cost|costs|worth|valued)\s+more\b|\bmore\s+valuable\b", " pricier "),
        (r"\b(?:cost|costs|worth|valued)\s+less\b|\bless\s+valuable\b", " cheaper "),
        # "how high will it go", "how low could it fall": the extreme of the window, not a
        # direction ("rise"/"fall" there name the movement whose extreme is asked for).
        (r"\bhow\s+high\b(?:[\s,;()-]+[\w']+){0,10}?[\s,;()-]+(?:go|goes|get|gets|rise|rises|climb|climbs"
         r"|reach|peak)\b", " highest "),
        (r"\bhow\s+low\b(?:[\s,;()-]+[\w']+){0,10}?[\s,;()-]+(?:go|goes|get|gets|fall|falls|drop|drops"
         r"|sink|sinks|dip|dips|reach)\b", " lowest "),
        (r"\bat\s+(?:the\s+)?most\b", " maximum "),
        (r"\bmost\s+affordable\b", " cheapest "),
        # "become cheaper", "get pricier": a change, like "fall" / "rise"
        (r"\b(?:become|becomes|becoming|get|gets|getting|grow|grows|turn|turns)\s+"
         r"(?:any\s+|even\s+|much\s+|a\s+lot\s+|a\s+bit\s+)?(?:cheaper|lower|less\s+expensive)\b",
         " goes_down "),
        (r"\b(?:become|becomes|becoming|get|gets|getting|grow|grows|turn|turns)\s+"
         r"(?:any\s+|even\s+|much\s+|a\s+lot\s+|a\s+bit\s+)?(?:pricier|higher|dearer|costlier)\b",
         " goes_up "),
        (rf"\b(?:higher|above|pricier|dearer|costlier|greater|bigger|larger)\s+(?:[\w']+\s+){{0,3}}than\s+"
         rf"(?:(?:it|they)\s+(?:is|are)\s+)?{_CURRENT}\b", " goes_up "),
        (rf"\b(?:lower|below|under|cheaper|smaller)\s+(?:[\w']+\s+){{0,3}}than\s+"
         rf"(?:(?:it|they)\s+(?:is|are)\s+)?{_CURRENT}\b", " goes_down "),
        (rf"\b(?:exceed|exceeds|above|over)\s+{_CURRENT}\b", " goes_up "),
        (rf"\bmore\s+(?:[\w']+\s+){{0,3}}than\s+(?:(?:it|they)\s+(?:is|are)\s+)?{_CURRENT}\b",
         " goes_up "),
        (rf"\bless\s+(?:[\w']+\s+){{0,3}}than\s+(?:(?:it|they)\s+(?:is|are)\s+)?{_CURRENT}\b",
         " goes_down "),
        (rf"\b(?:below|under|beneath)\s+{_CURRENT}\b", " goes_down "),
        (r"\b(?:go|goes|going|went|move|moves)\s+up\b", " goes_up "),
        (r"\b(?:go|goes|going|went|move|moves)\s+down\b", " goes_down "),
        # "what will the price rise to" asks for a price, not a direction
        (r"\b(?:rise|rises|climb|climbs|increase|increases|grow|grows|fall|falls|drop|drops"
         r"|decline|declines)\s+to\b", " reach "),
        (r"\b(?:be|is|are)\s+up\b(?!\s+(?:to|for)\b)", " goes_up "),
        (r"\b(?:be|is|are)\s+down\b(?!\s+(?:to|for)\b)", " goes_down "),
        (r"\brelative\s+to\b|\bcompared?\s+(?:to|with|against)\b|\bcompares\s+(?:to|with)\b"
         r"|\bin\s+comparison\s+(?:to|with)\b|\bmeasured\s+against\b",
         " versus "),
    )
)  # fmt: skip

_RISE = re.compile(vocab.RISE_EN)
_FALL = re.compile(vocab.FALL_EN)
_MOST = re.compile(vocab.MOST_EN)
_HIGH = re.compile(vocab.HIGH_EN)
_LOW = re.compile(vocab.LOW_EN)
# Comparatives that, for one project, compare with its current price.
_UP_COMPARATIVE = re.compile(r"\b(?:higher|pricier|dearer|costlier|greater)\b")
_DOWN_COMPARATIVE = re.compile(r"\b(?:lower|cheaper|smaller)\b")
_MEAN = re.compile(vocab.MEAN_EN)
_EACH = re.compile(vocab.EACH_EN)
_WEAK_EACH = re.compile(r"\bmonthly\b")
_ANY_MONTH = re.compile(
    r"\b(?:in|during|for)\s+any\s+(?:single\s+)?month\b|\bat\s+any\s+(?:point|time)\b"
)
_UNITS_MORE = re.compile(r"\b(?:more|most)\b")
_UNITS_FEWER = re.compile(r"\b(?:fewer|fewest|less)\b")
_RELATIVE = re.compile(vocab.RELATIVE_EN)
# Words allowed between "bigger" and "increase" / between "rise" and "the most".
_FORECAST_WORDS = r"expected|projected|forecast|predicted|anticipated|likely|estimated|potential"
_GAP_BEFORE = re.compile(
    r"\s*(?:(?:the|a|an|percentage|percent|relative|significant|sharp|overall|monthly|rate"
    rf"|rates|pace|speed|of|{_FORECAST_WORDS})\s+)*"
)
# "bigger price increase", "larger average price rise": the price words may sit between a
# size word and the change, but not after "highest"/"higher", which name a price level
# ("their highest price exceeds ...").
_GAP_BEFORE_VALUE = re.compile(
    r"\s*(?:(?:the|a|an|percentage|percent|relative|significant|sharp|overall|monthly|rate"
    r"|rates|pace|speed|of|average|value|unit|in"
    rf"|{PHRASES.gap_words_en}|{_FORECAST_WORDS})\s+)*"
)
_LEVEL_WORDS = frozenset({"higher", "highest", "maximum", "max", "deeper", "deepest"})
_GAP_AFTER = re.compile(PHRASES.gap_after_en)
_WHICH = re.compile(PHRASES.which_named_en)
# A yes/no question, at the start of any clause ("Compared with now, will X ...?"), or an
# embedded one ("tell me whether X will ..."). Polite requests ("could you tell me ...")
# are rewritten away first, so they do not read as yes/no questions.
_YES_NO = re.compile(
    r"(?:^|[,;:.?!]\s*)(?:will|would|is|are|does|do|can|could|shall|might|may)\b|\bwhether\b"
)
_WH = re.compile(r"\b(?:what|whats|which|how|when|who|whose|where)\b")
_POLITE = re.compile(PHRASES.polite_en)
# "compared with now": the single project's target is weighed against its current price.
_VERSUS_NOW = re.compile(rf"\bversus\s+(?:what\s+it\s+(?:is|costs)\s+)?{_CURRENT}\b")
_TREND = re.compile(
    r"\btrend\b|\bdirection\b|\bup\s+or\s+down\b|\bhold\s+(?:its|their|on\s+to\s+its)\s+value\b"
    r"|\b(?:stay|stays|remain|remains)\s+(?:the\s+same|flat|stable|unchanged|steady)\b"
)


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    chars = list(text)
    for start, end in spans:
        for i in range(max(start, 0), min(end, len(chars))):
            chars[i] = "#"
    return "".join(chars)


def _cue_text(question: str, spans: list[tuple[int, int]]) -> str:
    text = _mask(question, spans).lower().replace("’", "'")
    text = re.sub(r"#+", " ", text)
    text = re.sub(r"\s+", " ", text)
    text = _POLITE.sub(" ", text)
    for pattern, replacement in _REWRITES:
        text = pattern.sub(replacement, text)
    return text


def _is_yes_no(text: str) -> bool:
    """A yes/no question: a clause opening with an auxiliary, not inside a wh-question.

    "In Q3 2022, will X rise?" is one; "What price will A in Gusu, Suzhou, see?" is not.
    """
    for match in _YES_NO.finditer(text):
        if match.group().endswith("whether"):
            return True
        sentence = re.split(r"[.?!]", text[: match.start()])[-1]
        if not _WH.search(sentence):
            return True
    return False


def _first(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    return pattern.search(text)


def _aggregate_cue(text: str) -> Aggregate | None:
    """The aggregate named in ``text`` (comparison words already removed)."""
    hits: list[tuple[int, Aggregate]] = []
    for pattern, aggregate in (
        (_MEAN, Aggregate.MEAN),
        (_HIGH, Aggregate.MAX),
        (_LOW, Aggregate.MIN),
    ):
        match = pattern.search(text)
        if match:
            hits.append((match.start(), aggregate))
    if hits:
        return min(hits)[1]
    if _EACH.search(text):
        return Aggregate.EACH
    return None


def _remove(text: str, match: re.Match[str] | None) -> str:
    if match is None:
        return text
    return text[: match.start()] + " " + text[match.end() :]


def _near_most(text: str, cue: re.Match[str]) -> re.Match[str] | None:
    """A "most/bigger/faster" word close to the rise/fall word.

    "bigger increase", "rise the most", "larger percentage rise"; a distant one belongs to
    something else ("the maximum price ... will rise").
    """
    for most in _MOST.finditer(text):
        if most.end() <= cue.start():
            gap = text[most.end() : cue.start()]
            gap_rule = _GAP_BEFORE if most.group() in _LEVEL_WORDS else _GAP_BEFORE_VALUE
            if gap_rule.fullmatch(gap):
                return most
        elif _GAP_AFTER.fullmatch(text[cue.end() : most.start()]):
            return most
    return None


def _comparison(
    text: str, several: bool, units: bool = False, value: str = ""
) -> tuple[Comparison, str]:
    """The comparison a question asks for and its text with the consumed cue removed.

    ``units``: a units question, where "more" / "fewer" name the highest / lowest.
    """
    rise, fall = _first(_RISE, text), _first(_FALL, text)
    direction = None
    if rise and fall:
        direction = "rise" if rise.start() < fall.start() else "fall"
    elif rise or fall:
        direction = "rise" if rise else "fall"
    if not several:
        # "cheaper or pricier": every comparative is the direction, none an aggregate.
        comparatives = [*_UP_COMPARATIVE.finditer(text), *_DOWN_COMPARATIVE.finditer(text)]
        explicit = direction or _TREND.search(text) or _VERSUS_NOW.search(text)
        # "Will X get cheaper next month?": a comparative with one project compares with now.
        implied = comparatives and (
            _is_yes_no(text) or re.search(r"\bor\b|\bversus\b|\bthan\b", text)
        )
        if explicit or implied:
            rest = text
            for comparative in sorted(comparatives, key=lambda m: m.start(), reverse=True):
                rest = _remove(rest, comparative)
            return Comparison.VS_CURRENT, rest
        return Comparison.NONE, text
    categorical = bool(_WHICH.search(text) or _is_yes_no(text))
    if direction:
        cue = rise if direction == "rise" else fall
        assert cue is not None
        most = _near_most(text, cue)
        if most is not None:
            kind = Comparison.RISES_MOST if direction == "rise" else Comparison.FALLS_MOST
            return kind, _remove(text, most)
        # "Will A or B rise?" and "which of A, B will rise" both list the risers.
        kind = Comparison.WHICH_RISE if direction == "rise" else Comparison.WHICH_FALL
        return kind, text
    if not categorical:
        return Comparison.NONE, text
    if _VERSUS_NOW.search(text):
        # "which will be cheaper in May compared with today": each against its own price now.
        up, down = _UP_COMPARATIVE.search(text), _DOWN_COMPARATIVE.search(text)
        if up and (not down or up.start() < down.start()):
            return Comparison.WHICH_RISE, _remove(text, up)
        if down:
            return Comparison.WHICH_FALL, _remove(text, down)
    high, low = _first(_HIGH, text), _first(_LOW, text)
    if units:  # "who sold more units", "which sold fewer homes"
        high = high or _first(_UNITS_MORE, text)
        low = low or _first(_UNITS_FEWER, text)
    if high and (not low or high.start() < low.start()):
        return Comparison.HIGHEST, _remove(text, high)
    if low:
        return Comparison.LOWEST, _remove(text, low)
    raise QuestionError(
        f"the question asks 'which' but says neither what to compare (highest / lowest "
        f"{value or default_wording().value}) nor a direction (rise / fall)",
        suggestions=(
            f"Which of A or B will have the highest {value or default_wording().value} next month?",
            "Which of A or B will rise the most next year?",
        ),
    )


_CJK = re.compile(r"[\u3400-\u9fff]")
_ZH_EACH = re.compile(vocab.EACH_ZH)
_ZH_RISE = re.compile(vocab.RISE_ZH)
_ZH_FALL = re.compile(vocab.FALL_ZH)
_ZH_MOST = re.compile(vocab.MOST_ZH)
_ZH_YES_NO = re.compile(r"会[^，。？]*吗|是否|能否|会不会|还是|吗[？?]?$")
_ZH_WHICH = re.compile(r"哪|谁|还是")
_NOW = re.compile(vocab.NOW)
_LISTING = re.compile(r"\bforecasts?\b|\bprices\b|\bvalues\b|\bfigures\b|\blist\b")
_MEAN_WORD = re.compile(r"\baverage\b|\bmean\b|\bavg\b|\boverall\b")
MAX_HORIZON = 12  # months past R a forecast reaches


def _refusal_text(
    question: str, entities: list[tuple[int, int]], time: tuple[int, int] | None
) -> str:
    chars = list(question)
    for spans, mark in ((entities, "X"), ([time] if time else [], "T")):
        for start, end in spans:
            for i in range(start, end):
                chars[i] = "\0"
            if start < end:
                chars[start] = f" {mark} "
    return re.sub(r"\s+", " ", "".join(chars).replace("\0", "")).replace("’", "'")


def _scopes(index: EntityIndex, mentions: list[Mention], linked: Linked) -> tuple[ScopeRef, ...]:
    """Districts (else cities) named, in question order."""
    out: list[ScopeRef] = []
    inners = set(linked.inners)
    for mention in mentions:
        if mention.kind is MentionKind.INNER:
            for place_id in mention.ids:
                place = index.inners[place_id]
                if place in inners:
                    ref = ScopeRef(place[0], place[1], index.inner_zh.get(place, ""))
                    if ref not in out:
                        out.append(ref)
    for outer in linked.outers:
        if not any(ref.outer == outer for ref in out):
            out.append(ScopeRef(outer, None, index.outer_zh.get(outer, "")))
    return tuple(out)


def _candidates(
    index: EntityIndex, scopes: tuple[ScopeRef, ...], window: TimeWindow, reference: Month
) -> tuple[EntityRef, ...]:
    """Scope candidates: projects that can have a value in the window.

    For a future window, projects observed in R−11..R; for a past one, projects whose
    months overlap the window (the analyzer keeps those with a value).
    """
    out: list[EntityRef] = []
    future = window.last > reference
    for scope in scopes:
        for ref, entry in index.in_scope(scope.outer, scope.inner):
            if future:
                keep = entry.last_month >= reference - 11 and entry.first_month <= reference
            else:
                keep = entry.first_month <= window.last and entry.last_month >= window.first
            if keep:
                out.append(ref)
    return tuple(out)


def _default_window(reference: Month, forward: bool, zh: bool) -> tuple[TimeWindow, str]:
    month = reference + 1 if forward else reference
    if zh:
        note = (
            f"未给出时间，按{'下个月' if forward else '当前'}（{month.year}年{month.month}月）回答"
        )
    else:
        note = (
            f"no time was given, so this is about {'next month' if forward else 'now'} "
            f"({month.label})"
        )
    return TimeWindow(month, month, ""), note


def parse_question(
    question: str, index: EntityIndex, reference: Month, lexicon: Lexicon | None = None
) -> Plan:
    """Parse ``question`` into a ``Plan`` relative to the reference month ``reference``.

    Passes over the one tokenised question (``parse.passes``), each claiming spans and
    handing its result to the next: entities, time, linking, refusals of named causes,
    measure, family cues, filler; then what no pass claimed is refused
    (``parse.leftover``) and the family is read from the cue text. Raises
    ``QuestionError`` (or ``UnknownEntityError`` / ``AmbiguousEntityError``) naming the
    cause.
    """
    lexicon = lexicon or default_lexicon()
    if not question or not question.strip():
        raise QuestionError(
            f"the question is empty; ask about a {lexicon.wording.entity} and a time"
        )
    read = read_question(question, index.segmenter)
    zh = read.zh
    timed = time_pass(entity_pass(read, index), reference)
    # Named causes first (a measure the store lacks, "why", two questions): "in US dollars"
    # is refused as a unit, before the linker reads it as an unknown name.
    names = list(timed.found.claims.of(Pass.ENTITY))
    check_refusals(_refusal_text(question, names, timed.span), zh=zh, lexicon=lexicon)
    if zh:
        _check_zh_place(read, timed, index)
    resolved = link_pass(timed, index)
    linked = resolved.linked
    measured = measure_pass(resolved, lexicon)
    claims = filler_pass(read, cue_pass(measured, _CUES_ZH if zh else _CUES_EN), lexicon)
    spans = list(resolved.claims.of(Pass.ENTITY, Pass.TIME))
    text = _zh_text(question, spans) if zh else _cue_text(question, spans)
    language = Language.ZH if zh else Language.EN
    window = timed.window
    if window is not None:
        _check_horizon(window, reference)
    if linked.entities:
        _check_mixed_scope(question, timed.found.mentions, zh, index.wording)
    if not linked.entities:
        if zh:
            _check_zh_leftover(question, list(timed.found.mentions), spans, index.wording)
        refuse_unclaimed(read, claims, lexicon)
        return _scope_plan(
            question,
            index,
            reference,
            list(timed.found.mentions),
            linked,
            text,
            window,
            zh,
            measured.metric,
        )
    refuse_unclaimed(read, claims, lexicon)
    return _entity_plan(
        question, reference, linked.entities, text, window, language, measured.metric,
        index.wording,
    )  # fmt: skip


def _check_horizon(window: TimeWindow, reference: Month) -> None:
    if window.last > reference + MAX_HORIZON:
        raise QuestionError(
            f"'{window.expression}' ends in {window.last.label}, but forecasts reach "
            f"{MAX_HORIZON} months past now ({reference.label}), to "
            f"{(reference + MAX_HORIZON).label}; ask about months up to then"
        )


def _zh_text(question: str, spans: list[tuple[int, int]]) -> str:
    # "最为便宜" / "最为突出": the same cue as "最便宜" / "最突出".
    return re.sub(r"#+", " ", _mask(question, spans)).replace("最为", "最")


# What may follow a place name in a Chinese question about the place as a whole; anything
# else right after it ("南京市江宁区阳光天堂") is a project name the store does not know.
_ZH_AFTER_PLACE = re.compile(PHRASES.zh_after_place)


# A place named as a whole next to named projects: "with the Wuhan average", "和武汉市平均房价".
_PLACE_AS_WHOLE = re.compile(PHRASES.place_as_whole, re.I)


def _check_mixed_scope(
    question: str, mentions: Sequence[Mention], zh: bool, words: Wording
) -> None:
    """Refuse a question that weighs projects against a whole district or city."""
    for mention in mentions:
        if mention.kind is MentionKind.ENTITY:
            continue
        whole = _PLACE_AS_WHOLE.match(question, mention.end)
        if whole and not zh:
            # "the Wuhan average", not "what will A and B in Suzhou average" (a verb)
            before = question[: mention.start].rstrip().lower()
            whole = whole if before.endswith(" the") or "whole" in whole.group() else None
        if whole:
            raise QuestionError(
                f"这个问题把{words.entity_zh}和整个“{mention.text}”放在一起比较；请分开问："
                f"{words.entity_zh}的{words.value_zh_short}，或{mention.text}的{words.place_average_zh}"
                if zh
                else f"the question compares {words.entities} with {mention.text} as a whole; ask "
                f"separately for the {words.entities}' {words.value}s and for the average "
                f"{words.value} in {mention.text}"
            )


_ZH_PLACE_WORD = re.compile(r"[\u4e00-\u9fff]{2,8}(?:市|区|县)")
_ZH_NOT_PLACE = frozenset(PHRASES.not_places_zh)


def _check_zh_place(read: Question, timed: Timed, index: EntityIndex) -> None:
    """Refuse a city or district the catalog does not hold ("成都市"), naming it.

    Only when the question names no known place: "X市" then is the place it asks about.
    """
    if any(m.kind is not MentionKind.ENTITY for m in timed.found.mentions):
        return
    for segment in read.segments:
        if (
            _ZH_PLACE_WORD.fullmatch(segment.text)
            and segment.text not in _ZH_NOT_PLACE
            and not timed.claims.overlaps(segment.start, segment.end)
        ):
            outers = "、".join(index.outer_zh.get(c) or c for c in sorted(index.outers))
            raise UnknownEntityError(
                f"unknown {' or '.join(reversed(index.wording.groups))} '{segment.text}': the "
                f"store holds {outers}; `foretab tables --db DB` lists its "
                f"{index.wording.groups_plural[0] if index.wording.groups else 'tables'}"
            )


def _check_zh_leftover(
    question: str, mentions: list[Mention], spans: list[tuple[int, int]], words: Wording
) -> None:
    masked = _mask(question, spans)
    for mention in mentions:
        if mention.kind is MentionKind.ENTITY:
            continue
        rest = masked[mention.end :]
        if rest and not _ZH_AFTER_PLACE.match(rest):
            name = re.match(r"[\u3400-\u9fffA-Za-z0-9·]+", rest)
            word = name.group() if name else rest[:6]
            raise UnknownEntityError(
                f"unknown {words.entity} '{word}' in {mention.text}: no {words.entity} of that "
                f"name; `foretab projects --db DB --search TEXT` finds {words.entities} by name"
            )


def _scope_plan(
    question: str,
    index: EntityIndex,
    reference: Month,
    mentions: list[Mention],
    linked: Linked,
    text: str,
    window: TimeWindow | None,
    zh: bool,
    metric: Metric,
) -> Plan:
    words = index.wording
    rising = (_ZH_RISE if zh else _RISE).search(text) or (_ZH_FALL if zh else _FALL).search(text)
    if rising:
        raise QuestionError(
            f"rises and falls are answered for named {words.entities}, not for a whole "
            f"{' or '.join(words.groups)}; name the {words.entities} to compare "
            "(`foretab projects --db DB --district D` lists them), or ask for the highest / lowest / "
            f"average {words.value} in the {(words.groups or ('store',))[0]}"
        )
    scopes = _scopes(index, mentions, linked)
    query = scope_query_of(text, zh, metric)
    assumption = ""
    if window is None:
        window, assumption = _default_window(reference, False, zh)
    candidates = _candidates(index, scopes, window, reference)
    if not candidates:
        where = ", ".join(s.label for s in scopes)
        raise QuestionError(
            f"no {words.entity} in {where} has data for {window.first.label}–"
            f"{window.last.label}; `foretab projects --db DB` lists {words.entities} with their "
            "months"
        )
    past = window.last <= reference
    return Plan(
        question=question,
        reference_month=reference,
        entities=candidates,
        window=window,
        aggregate=Aggregate.VALUE if len(window.months) == 1 else Aggregate.MEAN,
        task=Task.HISTORY if past else Task.FORECAST,
        metric=query.metric,
        scopes=scopes,
        scope=query,
        assumption=assumption,
        language=Language.ZH if zh else Language.EN,
    )


def _entity_plan(
    question: str,
    reference: Month,
    entities: tuple[EntityRef, ...],
    text: str,
    window: TimeWindow | None,
    language: Language,
    metric: Metric,
    words: Wording,
) -> Plan:
    zh = language is Language.ZH
    several = len(entities) > 1
    cues = read_cues(text, zh, metric)
    change, which_month, threshold = cues.change, cues.which_month, cues.threshold
    if zh:
        comparison, rest = _zh_comparison(text, several, cues)
    else:
        try:
            comparison, rest = _comparison(
                text, several, cues.metric is Metric.UNITS, value=words.value
            )
        except QuestionError:
            if which_month is None and cues.metric is Metric.VALUE:
                raise
            comparison, rest = Comparison.NONE, text
    if which_month is not None or threshold is not None:
        comparison = Comparison.NONE
    if change is not None and not several and not (zh or _is_yes_no(text)):
        comparison = Comparison.NONE  # "how much will it rise or fall": a number
    if comparison is not Comparison.NONE:
        change = None
    measure = (
        ChangeMeasure.RELATIVE
        if (re.search(vocab.RELATIVE_ZH, text) if zh else _RELATIVE.search(text))
        else ChangeMeasure.ABSOLUTE
    )
    assumption = ""
    current = False
    if window is None:
        forward = (
            comparison is not Comparison.NONE
            and comparison not in (Comparison.HIGHEST, Comparison.LOWEST)
        ) or change is not None
        window, assumption = _default_window(reference, forward, zh)
        current = not forward
        if change is not None and not forward:
            change = None
    elif window.first == window.last == reference and _NOW.search(window.expression.lower()):
        current = True
    categorical = comparison is not Comparison.NONE
    if zh:
        aggregate = _zh_aggregate(rest, cues, window, which_month)
        if categorical and aggregate is Aggregate.EACH and not re.search(r"每个?月|逐月", rest):
            aggregate = Aggregate.MEAN  # "未来三个月哪个涨幅更大": the window's mean
    else:
        aggregate = _aggregate_cue(rest) if which_month is None else None
        if (
            categorical
            and aggregate is Aggregate.EACH
            and not _EACH.search(_WEAK_EACH.sub(" ", rest))
        ):
            # "a lowest monthly price": "monthly" names the price, not a list of months.
            aggregate = Aggregate.MEAN
        if aggregate is None or (which_month is not None):
            aggregate = Aggregate.MEAN
            if which_month is not None or (not categorical and _EACH.search(rest)):
                aggregate = Aggregate.EACH
            elif not categorical and _LISTING.search(rest) and not _MEAN_WORD.search(rest):
                aggregate = Aggregate.EACH  # "the forecast for the coming two months"
    if threshold is not None and not zh and _ANY_MONTH.search(text):
        # "exceed 50,000 in any month of 2021": some month above it, i.e. the maximum
        aggregate = Aggregate.MAX if threshold.above else Aggregate.MIN
    if len(window.months) == 1:
        aggregate = Aggregate.VALUE
    elif cues.metric is Metric.UNITS and aggregate in (Aggregate.MEAN, Aggregate.VALUE):
        aggregate = Aggregate.SUM  # units over a window are summed
    if which_month is not None:
        aggregate = Aggregate.EACH
    if categorical and aggregate is Aggregate.EACH:
        raise QuestionError(
            f"a comparison needs one target per {words.entity}, not a value for each month; "
            f"ask about the average, highest or lowest {words.value} of the window",
        )
    if change is not None and aggregate is Aggregate.EACH:
        aggregate = Aggregate.MEAN
    if window.last <= reference:
        task = Task.HISTORY
    elif categorical or threshold is not None or which_month is not None:
        task = Task.REASONING
    else:
        task = Task.FORECAST
    if current:
        # "now" is the current price: the value at R, else the latest month before it.
        window = TimeWindow(reference, reference, window.expression)
    return Plan(
        question=question,
        reference_month=reference,
        entities=entities,
        window=window,
        aggregate=aggregate,
        task=task,
        comparison=comparison,
        measure=measure,
        metric=cues.metric,
        change=change,
        which_month=which_month,
        threshold=threshold,
        assumption=assumption,
        language=language,
        current=current,
    )


def _zh_aggregate(
    text: str, cues: Cues, window: TimeWindow, which_month: Extreme | None
) -> Aggregate:
    if len(window.months) == 1:
        return Aggregate.VALUE
    if which_month is not None or window.only:
        return Aggregate.EACH  # "2020年9月与2021年6月…各是多少": one value per month named
    if _ZH_EACH.search(text):
        return Aggregate.EACH
    if re.search(r"最高|最贵|峰值", text):
        return Aggregate.MAX
    if re.search(r"最低|最便宜", text):
        return Aggregate.MIN
    # "去年的均价": the window's mean (docs/design.md §4); units over a window are summed later.
    return Aggregate.MEAN


_MEAN_ZH = re.compile(vocab.MEAN_ZH)
_ZH_VS_NOW = re.compile(
    r"(?:比|较|相比|高于|低于)(?:起)?(?:现在|目前|当前|本月|如今|眼下)[^，。？]*?(?:高|低|贵|便宜|多|少)"
)


def _zh_comparison(text: str, several: bool, cues: Cues) -> tuple[Comparison, str]:
    rise, fall = _ZH_RISE.search(text), _ZH_FALL.search(text)
    direction = None
    if rise and fall:
        direction = "rise" if rise.start() < fall.start() else "fall"
    elif rise or fall:
        direction = "rise" if rise else "fall"
    if not several:
        if _ZH_VS_NOW.search(text) and _ZH_YES_NO.search(text):
            return Comparison.VS_CURRENT, text  # "会比现在高吗": the target against now
        if direction and (_ZH_YES_NO.search(text) or re.search(r"走势|趋势", text)):
            return Comparison.VS_CURRENT, text
        if re.search(
            r"走势|趋势|涨还是跌|上涨还是下跌|是涨是跌|会涨还是会跌|是升是降|涨了还是跌了", text
        ):
            return Comparison.VS_CURRENT, text
        return Comparison.NONE, text
    if not _ZH_WHICH.search(text) and not _ZH_YES_NO.search(text):
        return Comparison.NONE, text
    if direction:
        if _ZH_MOST.search(text) or re.search(r"涨幅|跌幅", text):
            return (Comparison.RISES_MOST if direction == "rise" else Comparison.FALLS_MOST), text
        return (Comparison.WHICH_RISE if direction == "rise" else Comparison.WHICH_FALL), text
    extreme = extreme_of(text, True)
    if extreme is Extreme.HIGHEST:
        return Comparison.HIGHEST, text
    if extreme is Extreme.LOWEST:
        return Comparison.LOWEST, text
    return Comparison.NONE, text


# What the cue pass claims: the expressions the family readers above consume.
_CUES_EN: tuple[tuple[re.Pattern[str], str], ...] = (
    *CUE_PATTERNS_EN,
    *((pattern, "phrase") for pattern, _ in _REWRITES),
    (_POLITE, "polite"),
    (re.compile(rf"\b{_CURRENT}\b"), "now"),
    (_RISE, "rise"),
    (_FALL, "fall"),
    (_MOST, "most"),
    (_HIGH, "highest"),
    (_LOW, "lowest"),
    (_UP_COMPARATIVE, "higher"),
    (_DOWN_COMPARATIVE, "lower"),
    (_MEAN, "mean"),
    (_EACH, "each"),
    (_RELATIVE, "relative"),
    (_WHICH, "which"),
    (_YES_NO, "yes/no"),
    (_WH, "wh"),
    (_VERSUS_NOW, "versus now"),
    (_TREND, "trend"),
    (_NOW, "now"),
    (_LISTING, "listing"),
    (_MEAN_WORD, "mean"),
    (re.compile(r"\bhow\s+(?:high|low)\b|\babsolute\b"), "how high"),
    (_ANY_MONTH, "any month"),
)
_CUES_ZH: tuple[tuple[re.Pattern[str], str], ...] = (
    *CUE_PATTERNS_ZH,
    (_ZH_EACH, "each"),
    (_ZH_RISE, "rise"),
    (_ZH_FALL, "fall"),
    (_ZH_MOST, "most"),
    (_ZH_YES_NO, "yes/no"),
    (_ZH_WHICH, "which"),
    (_NOW, "now"),
    (_MEAN_ZH, "mean"),
    (_ZH_VS_NOW, "versus now"),
    (re.compile(vocab.RELATIVE_ZH), "relative"),
    (
        re.compile(
            r"走势|趋势|涨还是跌|上涨还是下跌|是涨是跌|是升是降|最高|最贵|峰值|最低|最便宜|最为|低廉|昂贵|最优|优秀|区间|介于"
        ),
        "extreme",
    ),
)
