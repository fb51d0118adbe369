"""Question → ``Plan``: entities, time window, then meaning from cue words.

No whole-question templates: the parser finds the projects (``entities``) and the month
window (``timexpr``), masks both out, and reads the remaining words for cues:

* comparison: "which/whose/will A or B" + rise/fall words (+ "most/bigger/larger/faster")
  or highest/lowest words; a single project with rise/fall words is "vs current";
* aggregate: "mean"/"average of ..."/"on average" → MEAN (a bare "average price" names
  the measure, not an aggregate), highest/maximum/peak → MAX, lowest/minimum → MIN,
  "each month"/"monthly"/"month by month" → EACH;
* measure: "percentage"/"percent"/"rate"/"relative change" → RELATIVE.

Phrasings normalised first (``en.REWRITES``): polite requests ("could you tell me ...") are
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
from dataclasses import replace

from foretab.core.months import Month
from foretab.core.plan import (
    Aggregate,
    ChangeMeasure,
    Comparison,
    EntityRef,
    Language,
    Metric,
    PlaceQuery,
    Plan,
    ScopeOp,
    ScopeQuery,
    ScopeRef,
    Task,
    TimeWindow,
    Wording,
)
from foretab.errors import QuestionError
from foretab.parse import vocabulary as vocab
from foretab.parse.claims import Pass
from foretab.parse.entities import EntityIndex, Linked, Mention, MentionKind
from foretab.parse.families import (
    read_cues,
    scope_query_of,
)
from foretab.parse.lang import en, zh
from foretab.parse.leftover import refuse_unclaimed
from foretab.parse.lexicon import Lexicon, default_lexicon
from foretab.parse.meaning import check_meaning
from foretab.parse.passes import (
    cue_pass,
    entity_pass,
    filler_pass,
    link_pass,
    measure_pass,
    time_pass,
)
from foretab.parse.phrases import PHRASES
from foretab.parse.places import PlaceReading, place_query_of, relative, yoy_window
from foretab.parse.question import read_question
from foretab.parse.refuse import check_refusals
from foretab.parse.text import mask

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


def _scopes(
    question: str, index: EntityIndex, mentions: list[Mention], linked: Linked
) -> tuple[ScopeRef, ...]:
    """Districts (else cities) named, in question order.

    A city named with one of its districts qualifies it ("Jiangning, Nanjing", 南京江宁),
    unless "and" / "or" joins the two ("Nanjing or Jiangning"): then the city is a subject
    of its own, beside the district.
    """
    out: dict[ScopeRef, int] = {}  # each scope and where the question first names it
    inners = set(linked.inners)
    for mention in mentions:
        if mention.kind is MentionKind.INNER:
            for place_id in mention.ids:
                place = index.inners[place_id]
                if place in inners:
                    ref = ScopeRef(place[0], place[1], index.inner_zh.get(place, ""))
                    out.setdefault(ref, mention.start)
    for outer in linked.outers:
        qualifies = any(ref.outer == outer for ref in out)
        if not qualifies or _outer_joined_to_its_inner(question, index, mentions, outer):
            named = [
                m.start
                for m in mentions
                if m.kind is MentionKind.OUTER and outer in (index.outers[i] for i in m.ids)
            ]
            ref = ScopeRef(outer, None, index.outer_zh.get(outer, ""))
            out.setdefault(ref, min(named, default=len(question)))  # "which city": unnamed
    return tuple(sorted(out, key=out.__getitem__))  # stable: ties keep their order


# Between two places named as two subjects ("Nanjing or Jiangning", 南京和江宁).
_JOINED = re.compile(r"\s*(?:,?\s*(?:and|or|vs\.?|versus)|和|与|或|或者|还是|及|跟|同)\s*", re.I)
# Between a district and the city that qualifies it ("Jiangning, Nanjing", "in Nanjing").
_QUALIFIED = re.compile(r"\s*(?:,|\s+in|\s+of)?\s*", re.I)


def _outer_joined_to_its_inner(
    question: str, index: EntityIndex, mentions: list[Mention], outer: str
) -> bool:
    """Whether the city ``outer`` is named as a subject beside one of its own districts."""

    def inner_of_outer(m: Mention) -> bool:
        return m.kind is MentionKind.INNER and any(index.inners[i][0] == outer for i in m.ids)

    for k, m in enumerate(mentions):
        if m.kind is not MentionKind.OUTER or outer not in (index.outers[i] for i in m.ids):
            continue
        before = mentions[k - 1] if k > 0 else None
        after = mentions[k + 1] if k + 1 < len(mentions) else None
        if before is not None and inner_of_outer(before):
            between = question[before.end : m.start]
            if _QUALIFIED.fullmatch(between):
                continue  # "Jiangning, Nanjing and Jianye, Nanjing": a qualifier
            if _JOINED.fullmatch(between):
                return True
        if (
            after is not None
            and inner_of_outer(after)
            and _JOINED.fullmatch(question[m.end : after.start])
        ):
            return True
    return False


def scope_candidates(
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


def _default_window(reference: Month, forward: bool, is_zh: bool) -> tuple[TimeWindow, str]:
    month = reference + 1 if forward else reference
    if is_zh:
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
    is_zh = read.zh
    timed = time_pass(entity_pass(read, index), reference)
    # Named causes first (a measure the store lacks, "why", two questions): "in US dollars"
    # is refused as a unit, before the linker reads it as an unknown name.
    names = list(timed.found.claims.of(Pass.ENTITY))
    check_refusals(_refusal_text(question, names, timed.span), zh=is_zh, lexicon=lexicon)
    if is_zh:
        zh.check_place(read, timed, index)
    resolved = link_pass(timed, index)
    linked = resolved.linked
    measured = measure_pass(resolved, lexicon)
    claims = filler_pass(read, cue_pass(measured, zh.CUES if is_zh else en.CUES), lexicon)
    spans = list(resolved.claims.of(Pass.ENTITY, Pass.TIME))
    text = zh.cue_text(question, spans) if is_zh else en.cue_text(question, spans)
    language = Language.ZH if is_zh else Language.EN
    window = timed.window
    if window is not None:
        _check_horizon(window, reference)
    if linked.entities:
        _check_mixed_scope(question, timed.found.mentions, is_zh, index.wording)
    named_text = mask(question, list(resolved.claims.of(Pass.ENTITY)))
    if not linked.entities:
        if is_zh:
            zh.check_leftover(question, list(timed.found.mentions), spans, index.wording, index)
        refuse_unclaimed(read, claims, lexicon)
        plan = _scope_plan(
            question,
            index,
            reference,
            list(timed.found.mentions),
            linked,
            text,
            window,
            is_zh,
            measured.metric,
        )
        check_meaning(plan, text, named_text, is_zh)
        return _stated(plan)
    refuse_unclaimed(read, claims, lexicon)
    plan = _entity_plan(
        question, reference, linked.entities, text, window, language, measured.metric,
        index.wording,
    )  # fmt: skip
    check_meaning(plan, text, named_text, is_zh)
    return _stated(plan)


_RECENT = re.compile(r"recent|lately|最近|近期", re.I)


def _stated(plan: Plan) -> Plan:
    """The plan with its default reading of "recently" stated (docs/design.md §3: R−2..R)."""
    if plan.assumption or not _RECENT.search(plan.window.expression):
        return plan
    first, last = plan.window.first, plan.window.last
    if plan.language is Language.ZH:
        note = f"“{plan.window.expression}”按最近三个月（{first.year}年{first.month}月至{last.year}年{last.month}月）回答"
    else:
        note = f"'{plan.window.expression}' is read as the last three months ({first.label} to {last.label})"
    return replace(plan, assumption=note)


def _check_horizon(window: TimeWindow, reference: Month) -> None:
    if window.last > reference + MAX_HORIZON:
        raise QuestionError(
            f"'{window.expression}' ends in {window.last.label}, but forecasts reach "
            f"{MAX_HORIZON} months past now ({reference.label}), to "
            f"{(reference + MAX_HORIZON).label}; ask about months up to then"
        )


# A place named as a whole next to named projects: "with the Wuhan average", "和武汉市平均房价".
_PLACE_AS_WHOLE = re.compile(PHRASES.place_as_whole, re.I)


def _check_mixed_scope(
    question: str, mentions: Sequence[Mention], is_zh: bool, words: Wording
) -> None:
    """Refuse a question that weighs projects against a whole district or city."""
    for mention in mentions:
        if mention.kind is MentionKind.ENTITY:
            continue
        whole = _PLACE_AS_WHOLE.match(question, mention.end)
        if whole and not is_zh:
            # "the Wuhan average", not "what will A and B in Suzhou average" (a verb)
            before = question[: mention.start].rstrip().lower()
            whole = whole if before.endswith(" the") or "whole" in whole.group() else None
        if whole:
            raise QuestionError(
                f"这个问题把{words.entity_zh}和整个“{mention.text}”放在一起比较；请分开问："
                f"{words.entity_zh}的{words.value_zh_short}，或{mention.text}的{words.place_average_zh}"
                if is_zh
                else f"the question compares {words.entities} with {mention.text} as a whole; ask "
                f"separately for the {words.entities}' {words.value}s and for the average "
                f"{words.value} in {mention.text}"
            )


def _past_weights(window: TimeWindow, reference: Month, is_zh: bool, words: Wording) -> None:
    """A weighted mean needs the summed measure, which is known for past months only."""
    if window.last > reference:
        raise QuestionError(
            f"加权需要{words.summed_zh}，而{words.summed_zh}只有过去的月份才有；请问过去的月份，或去掉“加权”"
            if is_zh
            else f"a weighted {words.value} needs the {words.summed}, which are known for past "
            "months only; ask about past months, or without 'weighted'"
        )


def _scope_plan(
    question: str,
    index: EntityIndex,
    reference: Month,
    mentions: list[Mention],
    linked: Linked,
    text: str,
    window: TimeWindow | None,
    is_zh: bool,
    metric: Metric,
) -> Plan:
    words = index.wording
    scopes = _scopes(question, index, mentions, linked)
    # "which city is the most expensive?": no place named, every city the subject (the
    # linker's every_outer); its children are the cities, as a city's are its districts.
    every_outer = bool(linked.outers) and not any(
        m.kind in (MentionKind.OUTER, MentionKind.INNER) for m in mentions
    )
    children = scopes if every_outer else _children(index, scopes)
    query = scope_query_of(text, is_zh, metric)
    reading = (
        None  # "every project of D" lists D's projects; weighted prices pool their months
        if query.op in (ScopeOp.EACH, ScopeOp.WEIGHTED)
        else place_query_of(
            text,
            is_zh,
            window,
            reference,
            metric,
            scopes,
            children,
            words=words,
            every_outer=every_outer,
        )
    )
    if reading is not None:
        return _place_plan(question, index, reference, reading, metric, is_zh)
    rising = (zh.RISE if is_zh else en.RISE).search(text) or (zh.FALL if is_zh else en.FALL).search(
        text
    )
    if rising and is_zh:
        inner, outer = (words.groups_zh or ("", ""))[:2]
        raise QuestionError(
            f"整个{inner}或{outer}过去的涨跌请问{words.value_zh_short}变化了多少（给出起止月份），"
            f"未来的涨跌可以直接问（下个月{words.value_zh_short}会涨吗）；或指明{words.entity_zh}"
        )
    if rising:
        raise QuestionError(
            f"rises and falls are answered for named {words.entities}, not for a whole "
            f"{' or '.join(words.groups)}; name the {words.entities} to compare "
            "(`foretab projects --db DB --district D` lists them), or ask for the highest / lowest / "
            f"average {words.value} in the {(words.groups or ('store',))[0]}"
        )
    if window is not None and query.op is ScopeOp.WEIGHTED:  # (no time named: now, past)
        _past_weights(window, reference, is_zh, words)
    return _places_read_whole(
        question, index, reference, window, scopes, query.metric, is_zh, scope=query
    )


def _children(index: EntityIndex, scopes: tuple[ScopeRef, ...]) -> tuple[ScopeRef, ...]:
    """The districts of the one city named (for "which district of C"), catalog order."""
    if len(scopes) != 1 or scopes[0].inner is not None:
        return ()
    outer = scopes[0].outer
    return tuple(
        ScopeRef(o, i, index.inner_zh.get((o, i), "")) for o, i in index.inners if o == outer
    )


def _place_plan(
    question: str,
    index: EntityIndex,
    reference: Month,
    reading: PlaceReading,
    metric: Metric,
    is_zh: bool,
) -> Plan:
    """Places asked about as wholes: their projects are read, the place series computed."""
    return _places_read_whole(
        question,
        index,
        reference,
        reading.window,
        reading.scopes,
        metric,
        is_zh,
        place=reading.query,
    )


def _places_read_whole(
    question: str,
    index: EntityIndex,
    reference: Month,
    window: TimeWindow | None,
    scopes: tuple[ScopeRef, ...],
    metric: Metric,
    is_zh: bool,
    *,
    scope: ScopeQuery | None = None,
    place: PlaceQuery | None = None,
) -> Plan:
    """A scope question's plan (``scope``) or a place question's (``place``).

    Its entities are the places' projects with data in the window (no time named: now);
    refused when there are none.
    """
    words = index.wording
    assumption = ""
    if window is None:
        window, assumption = _default_window(reference, False, is_zh)
    candidates = scope_candidates(index, scopes, window, reference)
    if not candidates:
        where = ", ".join(s.label for s in scopes)
        raise QuestionError(
            f"no {words.entity} in {where} has data for {window.first.label}–"
            f"{window.last.label}; `foretab projects --db DB` lists {words.entities} with their "
            "months"
        )
    return Plan(
        question=question,
        reference_month=reference,
        entities=candidates,
        window=window,
        aggregate=Aggregate.VALUE if len(window.months) == 1 else Aggregate.MEAN,
        task=Task.HISTORY if window.last <= reference else Task.FORECAST,
        metric=metric,
        scopes=scopes,
        scope=scope,
        place=place,
        assumption=assumption,
        language=Language.ZH if is_zh else Language.EN,
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
    is_zh = language is Language.ZH
    several = len(entities) > 1
    cues = read_cues(text, is_zh, metric)
    change, which_month, threshold = cues.change, cues.which_month, cues.threshold
    yoy = yoy_window(text, is_zh, window, reference)
    if yoy is not None:
        # "the YoY change in December 2021": December 2021 against December 2020
        window = yoy
        change = ChangeMeasure.RELATIVE if relative(text, is_zh) else ChangeMeasure.ABSOLUTE
    if is_zh:
        comparison, rest = zh.comparison(text, several, cues)
    else:
        try:
            comparison, rest = en.comparison(
                text, several, cues.metric is Metric.UNITS, value=words.value
            )
        except QuestionError:
            if which_month is None and cues.metric is Metric.VALUE:
                raise
            comparison, rest = Comparison.NONE, text
    if which_month is not None or threshold is not None:
        comparison = Comparison.NONE
    if change is not None and not several and not (is_zh or en.is_yes_no(text)):
        comparison = Comparison.NONE  # "how much will it rise or fall": a number
    if yoy is not None:
        comparison = Comparison.NONE
    if comparison is not Comparison.NONE:
        change = None
    measure = (
        ChangeMeasure.RELATIVE
        if (re.search(vocab.RELATIVE_ZH, text) if is_zh else en.RELATIVE.search(text))
        else ChangeMeasure.ABSOLUTE
    )
    assumption = ""
    current = False
    if window is None:
        forward = (
            comparison is not Comparison.NONE
            and comparison not in (Comparison.HIGHEST, Comparison.LOWEST)
        ) or change is not None
        window, assumption = _default_window(reference, forward, is_zh)
        current = not forward
        if change is not None and not forward:
            change = None
    elif window.first == window.last == reference and en.NOW.search(window.expression.lower()):
        current = True
    categorical = comparison is not Comparison.NONE
    if is_zh:
        aggregate = zh.aggregate(rest, cues, window, which_month)
        if categorical and aggregate is Aggregate.EACH and not re.search(r"每个?月|逐月", rest):
            aggregate = Aggregate.MEAN  # "未来三个月哪个涨幅更大": the window's mean
    else:
        aggregate = en.aggregate(rest) if which_month is None else None
        if (
            categorical
            and aggregate is Aggregate.EACH
            and not en.EACH.search(en.WEAK_EACH.sub(" ", rest))
        ):
            # "a lowest monthly price": "monthly" names the price, not a list of months.
            aggregate = Aggregate.MEAN
        if aggregate is None or (which_month is not None):
            aggregate = Aggregate.MEAN
            if which_month is not None or (not categorical and en.EACH.search(rest)):
                aggregate = Aggregate.EACH
            elif not categorical and en.LISTING.search(rest) and not en.MEAN_WORD.search(rest):
                aggregate = Aggregate.EACH  # "the forecast for the coming two months"
    if threshold is not None and not is_zh and en.ANY_MONTH.search(text):
        # "exceed 50,000 in any month of 2021": some month above it, i.e. the maximum
        aggregate = Aggregate.MAX if threshold.above else Aggregate.MIN
    if len(window.months) == 1:
        aggregate = Aggregate.VALUE
    elif cues.metric is Metric.UNITS and aggregate in (Aggregate.MEAN, Aggregate.VALUE):
        aggregate = Aggregate.SUM  # units over a window are summed
    if which_month is not None:
        aggregate = Aggregate.EACH
    weighted = (zh.WEIGHTED if is_zh else en.WEIGHTED).search(text)
    if weighted and aggregate is Aggregate.MEAN and not categorical and change is None:
        _past_weights(window, reference, is_zh, words)
        aggregate = Aggregate.WEIGHTED  # the window's prices weighted by its units sold
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
