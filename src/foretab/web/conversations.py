"""One conversation turn of ``POST /api/ask``, run in the engine's worker thread.

The conversation is rebuilt from its stored turns (``Conversation.replay``: planned, not
answered), the new question asked, and the reply rendered as JSON — an answer with its
``conversation_id``, or a ``clarify`` object (docs/design.md §4.3, §9).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import PydanticSerializationError

from foretab.converse import Conversation
from foretab.converse.store import owner_of
from foretab.core.answer import Answer
from foretab.core.schema import terminal_safe
from foretab.web.models import ConversationAnswerDoc


def owner_of_request(authorization: str | None) -> str:
    """The conversations' owner: the bearer token the request passed the gate with ("" without)."""
    if not authorization:
        return ""
    scheme, _, value = authorization.partition(" ")
    return owner_of(value.strip()) if scheme.lower() == "bearer" else ""


def conversation_turn(
    engine: Any, conversation_id: str, said: list[str], question: str, max_turns: int
) -> str:
    """The JSON reply to ``question`` in the conversation whose earlier turns were ``said``."""
    talk = Conversation(engine, max_turns=max_turns, id=conversation_id)
    talk.replay(said)
    turn = talk.ask(question)
    if turn.clarify is not None:
        doc: dict[str, object] = {
            "conversation_id": conversation_id,
            "question": question,
            "clarify": turn.clarify.to_dict(),
        }
        return terminal_safe(json.dumps(doc, ensure_ascii=False, allow_nan=False))
    assert turn.answer is not None
    return answer_json(turn.answer, conversation_id, turn.asked)


def answer_json(answer: Answer, conversation_id: str, asked: str) -> str:
    """``ConversationAnswerDoc`` of ``answer`` as JSON text, safe to print.

    The document's fields were validated by ``to_doc``: it is constructed, not validated
    again, and written by pydantic-core (0.03 ms, against 0.10 for ``model_dump`` and
    ``json.dumps``): the same JSON value, without spaces after the separators.
    """
    doc = answer.to_doc()
    # its __dict__ holds the fields: dict(doc) would first look up a missing .keys (4 µs)
    reply = ConversationAnswerDoc.model_construct(
        **doc.__dict__, conversation_id=conversation_id, asked=asked
    )
    try:
        return terminal_safe(reply.model_dump_json())
    except PydanticSerializationError:
        # A lone surrogate (a question's \ud800 escape) is not UTF-8: json.dumps keeps it
        # and terminal_safe writes it as an escape.
        data = doc.model_dump(mode="json") | {"conversation_id": conversation_id, "asked": asked}
        return terminal_safe(json.dumps(data, ensure_ascii=False, allow_nan=False))
