"""LLM provider layer: one interface (``LLMProvider.chat``) to any OpenAI-compatible server.

    from foretab.llm import ChatMessage, load_options, make_provider

    llm = make_provider(load_options(base_url="http://127.0.0.1:8000/v1", model="qwen"))
    reply = llm.chat([ChatMessage.user("Hi")], budget=llm.options.new_budget())
    print(reply.text, reply.call.usage.total_tokens, reply.call.elapsed_s)

``openai`` is imported only when the first request is sent.
"""

from __future__ import annotations

from pathlib import Path

from foretab.llm.budget import CallBudget
from foretab.llm.cache import ResponseCache
from foretab.llm.errors import (
    LLMBudgetExceeded,
    LLMConfigError,
    LLMConnectionError,
    LLMError,
    LLMHTTPError,
    LLMNotConfiguredError,
    LLMReplayMiss,
    LLMReplyError,
    LLMTimeoutError,
)
from foretab.llm.openai_provider import OpenAIProvider
from foretab.llm.options import LLMOptions, load_options
from foretab.llm.provider import LLMProvider
from foretab.llm.settings import LLMSettings
from foretab.llm.transcript import ReplayProvider, TranscriptRecorder, read_transcript
from foretab.llm.types import (
    ChatMessage,
    ChatReply,
    ChatRequest,
    Completion,
    LLMCall,
    ToolCall,
    ToolSpec,
    Usage,
)


def make_provider(
    options: LLMOptions,
    *,
    cache: str | Path | None = None,
    record: str | Path | None = None,
    replay: str | Path | None = None,
) -> LLMProvider:
    """The provider the options describe: HTTP (``OpenAIProvider``) or a transcript replay."""
    recorder = TranscriptRecorder(record) if record else None
    if replay:
        provider: LLMProvider = ReplayProvider(replay, options)
        provider.recorder = recorder
        return provider
    return OpenAIProvider(options, cache=ResponseCache(cache) if cache else None, recorder=recorder)


__all__ = [
    "CallBudget",
    "ChatMessage",
    "ChatReply",
    "ChatRequest",
    "Completion",
    "LLMBudgetExceeded",
    "LLMCall",
    "LLMConfigError",
    "LLMConnectionError",
    "LLMError",
    "LLMHTTPError",
    "LLMNotConfiguredError",
    "LLMOptions",
    "LLMProvider",
    "LLMReplayMiss",
    "LLMReplyError",
    "LLMSettings",
    "LLMTimeoutError",
    "OpenAIProvider",
    "ReplayProvider",
    "ResponseCache",
    "ToolCall",
    "ToolSpec",
    "TranscriptRecorder",
    "Usage",
    "load_options",
    "make_provider",
    "read_transcript",
]
