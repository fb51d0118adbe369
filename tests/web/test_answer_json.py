"""``POST /api/ask``'s answer is written by pydantic-core: the JSON value json.dumps wrote."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator

import pytest

from foretab.converse import Conversation
from foretab.core.answer import Answer
from foretab.core.schema import _TERMINAL_UNSAFE, terminal_safe
from foretab.engine import Engine
from foretab.web.conversations import answer_json
from tests.web.conftest import banded_factory
from tests.web.test_api import FORECAST, QUESTIONS


def before(answer: Answer, conversation_id: str, asked: str) -> str:
    """The reply as the server wrote it until 2026-12-06 (model_dump, then json.dumps)."""
    doc = answer.to_doc().model_dump(mode="json")
    doc["conversation_id"], doc["asked"] = conversation_id, asked
    return terminal_safe(json.dumps(doc, ensure_ascii=False, allow_nan=False))


@pytest.fixture(scope="module")
def engine(mini_duckdb: str) -> Iterator[Engine]:
    engine = banded_factory(mini_duckdb)("model", None)
    yield engine
    engine.close()


@pytest.mark.parametrize("question", [FORECAST, *QUESTIONS])
def test_the_same_json_value_as_before(engine: Engine, question: str) -> None:
    turn = Conversation(engine, id="c1").ask(question)
    assert turn.answer is not None
    new, old = answer_json(turn.answer, "c1", turn.asked), before(turn.answer, "c1", turn.asked)
    assert json.loads(new) == json.loads(old)
    assert list(json.loads(new)) == list(json.loads(old))  # the keys in the same order


@pytest.mark.parametrize("text", ["line\u2028sep \x85 \u202e \x7f", "lone \ud800 surrogate"])
def test_unsafe_characters_are_escaped_as_before(engine: Engine, text: str) -> None:
    answer = engine.ask(FORECAST)
    odd = dataclasses.replace(answer, question=f"{FORECAST} {text}")
    new = answer_json(odd, "c1", "")
    assert json.loads(new) == json.loads(before(odd, "c1", ""))
    assert json.loads(new)["question"].endswith(text)
    assert not _TERMINAL_UNSAFE.search(new)
