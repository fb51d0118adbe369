"""Follow-up resolution: the thread's plans + a follow-up → a new ``Plan`` (docs/design.md §4.3).

A pure function of its inputs (``resolve_follow_up``): the follow-up keeps every slot of
the previous plan it does not name — subject, measure, operation, time — and replaces those
it names. What cannot be resolved is refused with a message naming the missing or
unplaceable part; a follow-up is never answered as a standalone question about something
else. The new plan validates itself (``Plan.__post_init__``) like any other.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from foretab.converse.clarify import Clarify, clarify_plans, full_question, qualified
from foretab.converse.reading import Reading, StoreWords, read_follow_up, words_of
from foretab.converse.words import ordinal
from foretab.core.months import Month
from foretab.core.plan import (
    Aggregate,
    ChangeMeasure,
    Comparison,
    EntityRef,
    Extreme,
    Language,
    Metric,
    PlaceOp,
    PlaceQuery,
    Plan,
    ScopeOp,
    Task,
    TimeWindow,
)
from foretab.errors import QuestionError
from foretab.parse.parser import MAX_HORIZON, parse_question, scope_candidates
from foretab.parse.question import is_chinese
from foretab.parse.text import has_cjk

_SEVERAL = (
    Comparison.HIGHEST, Comparison.LOWEST, Comparison.RISES_MOST, Comparison.FALLS_MOST,
    Comparison.WHICH_RISE, Comparison.WHICH_FALL,
)  # fmt: skip
_FLIP = {
    Comparison.HIGHEST: (Comparison.HIGHEST, Comparison.LOWEST),
    Comparison.LOWEST: (Comparison.HIGHEST, Comparison.LOWEST),
}


def is_follow_up(text: str, *, in_conversation: bool = False) -> bool:
    """True when ``text`` reads as a follow-up ("and next year?", 那明年呢？) in its language.

    ``in_conversation``: there is an earlier question; then text that does not open as a
    question of its own ("same for X", "max instead", "the one in Suzhou"), or that asks
    about "it" without naming anything, follows it up too — never answered alone with a
    default time or measure the thread did not mean.
    """
    words = words_of(is_chinese(text) or has_cjk(text))
    if words.follow_up.search(text):
        return True
    if not in_conversation:
        return False
    if not words.full_question.search(text):
        return True
    capitalised = re.search(r"(?<!^)(?<![.?!]\s)\b[A-Z]", text.strip())
    return bool(words.pronoun.search(text)) and capitalised is None


def no_earlier_question(text: str) -> QuestionError:
    """The refusal of a follow-up that opens a conversation: nothing to follow."""
    if has_cjk(text):
        return QuestionError(
            f"“{text.strip()}”是追问，但之前没有问题可以接着问；请完整地问一遍（项目或地区、指标和时间）"
        )
    return QuestionError(
        f"'{text.strip()}' follows up an earlier question, but there is none in this "
        "conversation; ask the whole question (the project or place, the measure and the time)"
    )


def resolve_follow_up(plans: Sequence[Plan], text: str, store: StoreWords) -> Plan | Clarify:
    """The plan ``text`` asks for, read against ``plans`` (the thread's, newest last).

    Raises ``QuestionError`` naming what is missing or not understood; a follow-up name
    that is several entities gives a ``Clarify`` with one full question per candidate.
    """
    if not plans:
        raise no_earlier_question(text)
    previous = plans[-1]
    words = words_of(has_cjk(text))
    if words.both.search(text):
        return _both(plans, text, store)
    choice = words.choice.search(text)
    if choice:
        return _one_of(previous, text, choice)
    if words.the_two.search(text) and not words.last_year.search(text):
        return _about_the_two(plans, text, store)
    reading = read_follow_up(text, store)
    if reading.ambiguous is not None:
        error = reading.ambiguous
        plans_each = [
            (ref, apply_reading(previous, replace(reading, entities=(ref,), ambiguous=None), store))
            for ref in sorted(error.candidates)
        ]
        return clarify_plans(error, plans_each, reading.language, store.index)
    return apply_reading(previous, reading, store)


def apply_reading(previous: Plan, reading: Reading, store: StoreWords) -> Plan:
    """``previous`` with the slots ``reading`` names replaced (a refusal when one cannot be)."""
    zh_ = reading.zh
    scopes = previous.scopes
    entities = previous.entities
    if reading.places:
        if not previous.scopes:
            raise _refuse(
                zh_,
                f"“{reading.text.strip()}”说的是整个地区，而上一个问题问的是{store.index.wording.entity_zh}；请完整地问一遍",
                f"'{reading.text.strip()}' names a {' or '.join(store.index.wording.groups)} as a whole, "
                f"but the question before was about {store.index.wording.entities}; ask the whole question",
            )
        scopes = (*previous.scopes, *reading.places) if reading.add else reading.places
    elif reading.entities:
        if previous.scopes:
            raise _refuse(
                zh_,
                f"“{reading.text.strip()}”说的是{store.index.wording.entity_zh}，而上一个问题问的是整个地区；请完整地问一遍",
                f"'{reading.text.strip()}' names {store.index.wording.entities}, but the question "
                "before was about a place as a whole; ask the whole question",
            )
        if reading.add:
            entities = tuple(dict.fromkeys((*previous.entities, *reading.entities)))
        else:
            if (
                len(reading.entities) == 1
                and len(previous.entities) > 1
                and previous.comparison in _SEVERAL
            ):
                raise _refuse(
                    zh_,
                    "上一个问题比较了几个项目；请说明这个名称换掉哪一个，或用“和…比呢”加入比较",
                    f"the question before compared several {store.index.wording.entities}; say "
                    f"which one '{reading.text.strip()}' replaces, or add it with 'compared with …'",
                )
            entities = reading.entities
    elif reading.add:
        raise _refuse(
            zh_,
            "“和…比”没有说和谁比；请说出名称",
            "'compared with' names nothing to compare with; name it",
        )
    window = previous.window
    current = previous.current
    assumption = previous.assumption
    if reading.window is not None:
        window = reading.window
        if _is_yoy(previous) and len(window.months) == 1:
            window = _yoy_window(window.first, window.expression)
        current = False
        assumption = ""
        if window.last > store.reference + MAX_HORIZON:
            raise _refuse(
                zh_,
                f"“{window.expression}”超出了预测范围（到{(store.reference + MAX_HORIZON).label}）",
                f"'{window.expression}' ends in {window.last.label}, but forecasts reach "
                f"{(store.reference + MAX_HORIZON).label}; ask about months up to then",
            )
    metric = reading.metric or previous.metric
    slots = _Slots(previous, reading, store, entities, scopes, window, current, assumption, metric)
    return slots.build()


class _Slots:
    """The new plan's slots, from the previous plan's and the follow-up's."""

    def __init__(
        self,
        previous: Plan,
        reading: Reading,
        store: StoreWords,
        entities: tuple[EntityRef, ...],
        scopes: tuple,
        window: TimeWindow,
        current: bool,
        assumption: str,
        metric: Metric,
    ) -> None:
        self.previous, self.reading, self.store = previous, reading, store
        self.entities, self.scopes, self.window = entities, scopes, window
        self.current, self.assumption, self.metric = current, assumption, metric
        self.zh = reading.zh
        self.aggregate = previous.aggregate
        self.comparison = previous.comparison
        self.measure = previous.measure
        self.change = previous.change
        self.which_month = previous.which_month
        self.scope = previous.scope
        self.place = previous.place

    def build(self) -> Plan:
        r = self.reading
        if r.last_year:
            self._last_year()
        if r.extreme is not None:
            self._extreme(r.extreme)
        if r.relative:
            self._relative()
        if r.mean and not self.scopes:
            self.aggregate = Aggregate.MEAN
        if r.each and not self.scopes:
            self.aggregate = Aggregate.EACH
        self._normalise_aggregate()
        entities = self.entities
        if self.scopes:
            entities = scope_candidates(
                self.store.index, self.scopes, self.window, self.store.reference
            )
            if not entities:
                raise _refuse(
                    self.zh,
                    "这个地区在这段时间没有数据",
                    f"no {self.store.index.wording.entity} in {', '.join(s.label for s in self.scopes)} "
                    f"has data for {self.window.first.label}–{self.window.last.label}",
                )
        previous = self.previous
        plan = replace(
            previous,
            question=r.text,
            entities=entities,
            scopes=self.scopes,
            window=self.window,
            aggregate=self.aggregate,
            task=self._task(),
            comparison=self.comparison,
            measure=self.measure,
            metric=self.metric,
            change=self.change,
            which_month=self.which_month,
            scope=self.scope,
            place=self.place,
            assumption=self.assumption,
            current=self.current,
            language=r.language if _has_words(r.text) else previous.language,
        )
        # Every follow-up carries its resolved question: LLM stages read ``plan.question``
        # as their query, so they see the whole question, not the fragment typed.
        return replace(plan, question=full_question(plan, self.store.index))

    def _task(self) -> Task:
        if self.window.last <= self.store.reference:
            return Task.HISTORY
        if self.scopes:
            return Task.FORECAST
        if self.comparison is not Comparison.NONE or self.previous.threshold or self.which_month:
            return Task.REASONING
        return Task.FORECAST

    def _normalise_aggregate(self) -> None:
        several = len(self.window.months) > 1
        units = self.metric is Metric.UNITS
        if self.scopes:
            self.aggregate = Aggregate.MEAN if several else Aggregate.VALUE
            if self.scope is not None and self.reading.metric is not None:
                metric = self.reading.metric
                rank_by = metric if self.scope.op is ScopeOp.TOP else self.scope.rank_by
                op = self.scope.op
                if op in (ScopeOp.MEAN, ScopeOp.TOTAL):  # a place's units are summed
                    op = ScopeOp.TOTAL if metric is Metric.UNITS else ScopeOp.MEAN
                self.scope = replace(self.scope, op=op, metric=metric, rank_by=rank_by)
            return
        if not several:
            if self.which_month is None:
                self.aggregate = Aggregate.VALUE
            return
        if self.aggregate is Aggregate.VALUE:
            self.aggregate = Aggregate.SUM if units else Aggregate.MEAN
        elif units and self.aggregate is Aggregate.MEAN:
            self.aggregate = Aggregate.SUM
        elif not units and self.aggregate is Aggregate.SUM:
            self.aggregate = Aggregate.MEAN

    def _last_year(self) -> None:
        word = self.reading.last_year_word
        months = self.window.months
        if len(months) != 1 or self.window.last > self.store.reference:
            raise _refuse(
                self.zh,
                f"“{word}”比较的是过去的某一个月和上年同月；上一个问题的时间是多个月或未来的月份，请指明一个过去的月份",
                f"'{word}' compares one past month with the same month a year earlier; the question "
                "before is about several months or a future month: name one past month",
            )
        self.window = _yoy_window(months[0], self.window.expression)
        change = ChangeMeasure.RELATIVE if self.reading.relative else ChangeMeasure.ABSOLUTE
        if self.place is not None and self.place.op is PlaceOp.VALUE:
            self.place = replace(self.place, op=PlaceOp.CHANGE, change=change)
        elif self.scope is not None and self.scope.op in (ScopeOp.MEAN, ScopeOp.TOTAL):
            # one place's mean (total) that month, a year apart: the place's own change
            self.scope = None
            self.place = PlaceQuery(PlaceOp.CHANGE, change=change)
        elif self.scopes:
            raise _refuse(
                self.zh,
                f"“{word}”不能用于这类地区问题",
                f"'{word}' cannot be asked of this question about a place; ask for the change in full",
            )
        elif self.comparison is Comparison.NONE and self.previous.threshold is None:
            self.change = change
            self.aggregate = Aggregate.MEAN
        else:
            raise _refuse(
                self.zh,
                f"“{word}”不能用于比较类问题",
                f"'{word}' cannot be asked of a comparison; ask for the change in full",
            )

    def _extreme(self, extreme: Extreme) -> None:
        word = self.reading.extreme_word
        highest = extreme is Extreme.HIGHEST
        if self.scope is not None:
            if self.scope.op in (
                ScopeOp.PICK,
                ScopeOp.TOP,
                ScopeOp.TOP_THEN_PICK,
                ScopeOp.FILTER_THEN_PICK,
            ):
                self.scope = replace(self.scope, extreme=extreme)
                return
        elif self.place is not None:
            if self.place.op in (PlaceOp.COMPARE, PlaceOp.RANK, PlaceOp.WHICH_MONTH):
                self.place = replace(self.place, extreme=extreme)
                return
        elif self.comparison in _FLIP:
            self.comparison = _FLIP[self.comparison][0 if highest else 1]
            return
        elif self.which_month is not None:
            self.which_month = extreme
            return
        elif (
            self.comparison is Comparison.NONE
            and self.change is None
            and self.previous.threshold is None
            and len(self.window.months) > 1
        ):
            # a window's values: its highest / lowest month's value
            self.aggregate = Aggregate.MAX if highest else Aggregate.MIN
            return
        raise _refuse(
            self.zh,
            f"“{word}”在这里没有可以选的（上一个问题只有一个月、一个值）；请完整地问一遍",
            f"'{word}' has nothing to choose from here (the question before asks for one value "
            "of one month); ask the whole question",
        )

    def _relative(self) -> None:
        word = self.reading.relative_word
        if self.place is not None and self.place.change is not None:
            self.place = replace(self.place, change=ChangeMeasure.RELATIVE)
        elif self.change is not None:
            self.change = ChangeMeasure.RELATIVE
        elif self.comparison in (Comparison.RISES_MOST, Comparison.FALLS_MOST):
            self.measure = ChangeMeasure.RELATIVE
        else:
            raise _refuse(
                self.zh,
                f"“{word}”需要一个变化（涨跌多少）；上一个问题问的不是变化",
                f"'{word}' needs a change to express in percent; the question before asks for no change",
            )


def _yoy_window(month: Month, expression: str) -> TimeWindow:
    return TimeWindow(month - 12, month, expression, only=(month - 12, month))


def _is_yoy(plan: Plan) -> bool:
    only = plan.window.only
    changes = plan.change is not None or (
        plan.place is not None and plan.place.op is PlaceOp.CHANGE
    )
    return changes and len(only) == 2 and only[1] - only[0] == 12


def _has_words(text: str) -> bool:
    return bool(re.search(r"[A-Za-z]{2,}|[\u4e00-\u9fff]", text))


def _refuse(zh_: bool, zh_text: str, en_text: str) -> QuestionError:
    return QuestionError(zh_text if zh_ else en_text)


def _last_subjects(plans: Sequence[Plan]) -> list[EntityRef]:
    """The thread's last two distinct named entities, in the order they were asked."""
    seen: list[EntityRef] = []
    for plan in reversed(plans):
        if plan.scopes:
            continue
        for ref in reversed(plan.entities):
            if ref not in seen:
                seen.append(ref)
        if len(seen) >= 2:
            break
    return list(reversed(seen[:2]))


def _both(plans: Sequence[Plan], text: str, store: StoreWords) -> Plan:
    subjects = _last_subjects(plans)
    zh_ = has_cjk(text)
    if len(subjects) < 2:
        raise _refuse(
            zh_,
            f"“{text.strip()}”：这段对话里只有一个{store.index.wording.entity_zh}，没有两个可以一起问",
            f"'{text.strip()}': this conversation has named one {store.index.wording.entity} "
            "only, so there are not both to ask about; name the other",
        )
    previous = plans[-1]
    reading = Reading(text=text, language=Language.ZH if zh_ else previous.language)
    return apply_reading(replace(previous, entities=tuple(subjects)), reading, store)


def _one_of(previous: Plan, text: str, choice: re.Match[str]) -> Plan:
    number = ordinal(choice.group("n") or choice.groupdict().get("d") or "")
    zh_ = has_cjk(text)
    if len(previous.entities) < 2 or previous.scopes:
        raise _refuse(
            zh_,
            f"“{text.strip()}”：现在没有可以选的选项",
            f"'{text.strip()}': there is no list of choices to pick the first or second one "
            "from; ask the whole question",
        )
    if number > len(previous.entities):
        raise _refuse(
            zh_,
            f"上一个问题只有{len(previous.entities)}个名称",
            f"the question before names {len(previous.entities)} only",
        )
    return replace(previous, entities=(previous.entities[number - 1],), comparison=Comparison.NONE)


def _about_the_two(plans: Sequence[Plan], text: str, store: StoreWords) -> Plan:
    """A question of its own about "the two" / 两个: the thread's two subjects written in."""
    subjects = _last_subjects(plans)
    zh_ = has_cjk(text)
    if len(subjects) < 2:
        raise _refuse(
            zh_,
            f"“{text.strip()}”说的是两个，但这段对话里只有一个{store.index.wording.entity_zh}",
            f"'{text.strip()}' is about two {store.index.wording.entities}, but this conversation "
            f"has named one only; name them",
        )
    language = Language.ZH if zh_ else Language.EN
    joiner = "和" if zh_ else " and "
    names = joiner.join(qualified(store.index, ref, language) for ref in subjects)
    words = words_of(zh_)
    question = words.the_two.sub(names, text, count=1)
    previous = plans[-1]
    try:
        plan = parse_question(question, store.index, store.reference, store.lexicon)
    except QuestionError:
        plan = None
    if plan is None or not plan.window.expression:
        # no time of its own: the thread's
        when = _when(previous, zh_)
        question = (
            f"{question.rstrip(' ?？')}{when}？" if zh_ else f"{question.rstrip(' ?')} {when}?"
        )
        plan = parse_question(question, store.index, store.reference, store.lexicon)
    return plan


def _when(plan: Plan, zh_: bool) -> str:
    window = plan.window
    if zh_:

        def zm(m: Month) -> str:
            return f"{m.year}年{m.month}月"

        if plan.current:
            return "现在"
        return (
            zm(window.first)
            if window.first == window.last
            else f"{zm(window.first)}至{zm(window.last)}"
        )
    if plan.current:
        return "now"
    if window.first == window.last:
        return f"in {window.first.label}"
    return f"from {window.first.label} to {window.last.label}"
