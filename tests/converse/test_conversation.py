"""Follow-ups and clarifying choices on the mini store (docs/design.md §4.3), fast.

The real-corpus dialogues are ``tests/engine/test_dialogues.py``; these hold the pieces:
the pure resolution, refusals that name the part, the clarify's choices as full questions
that answer like the same question asked alone, and the bounded thread.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from foretab.converse import Conversation, StoreWords, is_follow_up, resolve_follow_up
from foretab.core.months import Month
from foretab.core.plan import Aggregate, Metric
from foretab.engine import Engine
from foretab.errors import QuestionError

BUND = "What was the price of Bund Garden in Huangpu, Shanghai in December 2021?"


@pytest.fixture(scope="module")
def engine(mini_duckdb: str) -> Iterator[Engine]:
    with Engine.open(mini_duckdb, future="oracle") as built:
        yield built


def _words(engine: Engine) -> StoreWords:
    context = engine.context
    return StoreWords(context.index, context.lexicon, context.reference)


def test_a_follow_up_keeps_what_it_does_not_name(engine: Engine) -> None:
    first = engine.parse(BUND)
    wider = resolve_follow_up([first], "and in 2020?", _words(engine))
    assert not isinstance(wider, type(None))
    assert (wider.window.first, wider.window.last) == (Month(2020, 1), Month(2020, 12))
    assert wider.entities == first.entities and wider.aggregate is Aggregate.MEAN
    units = resolve_follow_up([first, wider], "in units?", _words(engine))
    assert units.metric is Metric.UNITS and units.aggregate is Aggregate.SUM
    assert units.window == wider.window
    other = resolve_follow_up([first, wider, units], "what about Huamu Terrace?", _words(engine))
    assert [e.name for e in other.entities] == ["Huamu Terrace"]
    assert other.metric is Metric.UNITS and other.window == wider.window


def test_the_answer_is_the_standalone_questions(engine: Engine) -> None:
    talk = engine.conversation()
    talk.ask(BUND)
    turn = talk.ask("what about Huamu Terrace in Pudong?")
    alone = engine.ask("What was the price of Huamu Terrace in Pudong, Shanghai in December 2021?")
    assert turn.answer is not None and turn.answer.answer == alone.answer
    assert "Huamu Terrace (Pudong New Area, Shanghai)" in turn.asked
    assert turn.canonical == "the price of Huamu Terrace in December 2021"


@pytest.mark.parametrize(
    ("said", "named"),
    [
        ("and next year in dollars?", "dollars"),
        ("what about the weather?", "weather"),
        ("the first one", "first"),
        ("both", "both"),
        ("the lowest instead", "lowest"),
        ("in percent?", "percent"),
    ],
)
def test_an_unresolvable_follow_up_names_the_part(engine: Engine, said: str, named: str) -> None:
    with pytest.raises(QuestionError, match=named):
        resolve_follow_up([engine.parse(BUND)], said, _words(engine))


def test_a_follow_up_with_nothing_before_it_is_refused(engine: Engine) -> None:
    assert is_follow_up("and next year?") and is_follow_up("那明年呢？")
    assert not is_follow_up(BUND)
    with pytest.raises(QuestionError, match="earlier question"):
        engine.conversation().ask("and next year?")
    with pytest.raises(QuestionError, match="之前没有问题"):
        engine.conversation().ask("那明年呢？")


def test_an_ambiguous_name_is_a_clarify_of_full_questions(engine: Engine) -> None:
    talk = engine.conversation()
    turn = talk.ask("What was the price of Poly Garden in December 2021?")
    assert turn.clarify is not None and turn.answer is None
    choices = turn.clarify.questions
    assert [("Guangzhou" in c, "Shanghai" in c) for c in choices] == [(True, False), (False, True)]
    picked = talk.ask("2")
    assert picked.answer is not None
    assert picked.answer.answer == engine.ask(choices[1]).answer
    both = engine.conversation()
    both.ask("What was the price of Poly Garden in December 2021?")
    answer = both.ask("both").answer
    assert answer is not None and len(answer.answer) == 2


def test_a_conversation_keeps_its_last_turns_only(engine: Engine) -> None:
    talk = Conversation(engine, max_turns=2)
    talk.ask(BUND)
    talk.ask("and in November 2021?")
    last = talk.ask("and in October 2021?")
    assert len(talk.turns) == 2 and talk.turns[-1] is last
    assert last.answer is not None and last.answer.plan.window.first == Month(2021, 10)


def test_text_that_is_no_question_of_its_own_follows_up(engine: Engine) -> None:
    """Found probing phrasings outside the dialogue set: each was answered alone ("now")."""
    talk = engine.conversation()
    talk.ask("What was the average price of Bund Garden in Huangpu, Shanghai in 2020?")
    same = talk.ask("same for Huamu Terrace in Pudong")
    assert same.plan is not None and same.plan.window.first == Month(2020, 1)
    assert [e.name for e in same.plan.entities] == ["Huamu Terrace"]
    it = talk.ask("what was it in 2019?")
    assert it.plan is not None and it.plan.window.first == Month(2019, 1)
    assert [e.name for e in it.plan.entities] == ["Huamu Terrace"]
    assert talk.ask("max instead").plan.aggregate is Aggregate.MAX  # type: ignore[union-attr]
    # a question of its own is still asked alone
    alone = talk.ask(BUND)
    assert alone.plan is not None and alone.plan.window.first == Month(2021, 12)


def test_a_clarify_is_answered_by_naming_the_place(engine: Engine) -> None:
    talk = engine.conversation()
    assert talk.ask("What was the price of Poly Garden in December 2021?").clarify is not None
    picked = talk.ask("the one in Shanghai")
    assert picked.plan is not None
    assert [(e.outer, e.name) for e in picked.plan.entities] == [("Shanghai", "Poly Garden")]
