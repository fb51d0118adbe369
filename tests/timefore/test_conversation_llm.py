"""An LLM engine in a conversation: the follow-up reaches the model as the resolved question.

Real HTTP to the fake OpenAI-compatible server through the ``openai`` client (the provider
layer); the follow-up is resolved by the rules, the engine's own stages answer the plan.
"""

from __future__ import annotations

import re

import pytest

from foretab.engine import build_engine
from foretab.llm import OpenAIProvider

QUESTION = "What will the price of Bund Garden in Huangpu District, Shanghai be next month?"


@pytest.mark.slow  # ~3.5 s: the vanilla engine built over the store
def test_a_follow_up_is_sent_as_the_whole_question(fake_openai, mini_duckdb) -> None:
    seen: list[dict] = []

    def respond(body: dict) -> str:
        seen.append(body)
        return "Based on the trend: [[60000.0]]"

    fake_openai.respond_with(respond)
    llm = OpenAIProvider(fake_openai.options())
    with build_engine(mini_duckdb, "vanilla", llm=llm) as engine:
        talk = engine.conversation()
        talk.ask(QUESTION)
        turn = talk.ask("and by March 2022?")
    assert turn.answer is not None and turn.answer.answer == [[60000.0]]
    assert len(seen) == 2
    queries = [re.findall(r"<Query>:\s*(.*)", b["messages"][-1]["content"]) for b in seen]
    asked = queries[1][-1]
    assert asked == "The price of Bund Garden (Huangpu District, Shanghai) in March 2022?"
    assert asked == turn.asked and "and by" not in asked
    assert turn.answer.plan.window.first.label == "March 2022"


@pytest.mark.slow  # the hybrid engine over the store, ~3 s
def test_a_hybrid_conversation_sends_nothing_for_rules_questions(fake_openai, mini_duckdb) -> None:
    fake_openai.respond_with(lambda body: "[[1.0]]")
    llm = OpenAIProvider(fake_openai.options())
    with build_engine(mini_duckdb, "hybrid", llm=llm, future="oracle") as engine:
        talk = engine.conversation()
        first = talk.ask(QUESTION)
        follow = talk.ask("and by March 2022?")
    assert first.answer is not None and first.answer.engine == "hybrid:rules"
    assert follow.plan is not None and follow.plan.window.first.label == "March 2022"
    assert fake_openai.requests == []
