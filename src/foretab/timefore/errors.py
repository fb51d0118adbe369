"""Errors of the LLM engines: each says what the LLM did wrong and what to try."""

from __future__ import annotations

from foretab.errors import ForetabError


class AgentError(ForetabError):
    """An LLM agent could not finish: unusable replies, no valid SQL, no forecast call."""


class EngineChoiceError(ForetabError):
    """An unknown engine, or an LLM engine asked for without an LLM configured."""
