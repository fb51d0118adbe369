"""One conversation turn of ``POST /api/ask``, run in the engine's worker thread.

The conversation is rebuilt from its stored turns (``Conversation.replay``: planned, not
answered), the new question asked, and the reply rendered as JSON — an answer with its
``conversation_id``, or a ``clarify`` object (docs/design.md §4.3, §9).
"""

from __future__ import annotations

import json
from typing import Any

from foretab.converse import Conversation
from foretab.converse.store import owner_of
from foretab.core.schema import terminal_safe


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
    else:
        assert turn.answer is not None
        doc = turn.answer.to_doc().model_dump(mode="json")
        doc["conversation_id"] = conversation_id
        doc["asked"] = turn.asked
    return terminal_safe(json.dumps(doc, ensure_ascii=False, allow_nan=False))
