"""Conversations: follow-up questions and clarifying choices (docs/design.md §4.3).

``Conversation`` (``engine.conversation()``) keeps a bounded thread of turns;
``resolve_follow_up`` turns the thread's plans and a follow-up into a new plan (a pure
function); ``Clarify`` offers the candidates of an ambiguous name as full questions;
``Conversations`` holds many of them for a server, bounded in number, turns and age.
"""

from foretab.converse.clarify import Choice, Clarify
from foretab.converse.conversation import Conversation, Turn
from foretab.converse.reading import StoreWords
from foretab.converse.resolve import is_follow_up, resolve_follow_up

__all__ = [
    "Choice",
    "Clarify",
    "Conversation",
    "StoreWords",
    "Turn",
    "is_follow_up",
    "resolve_follow_up",
]
