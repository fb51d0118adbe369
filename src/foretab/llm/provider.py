"""``LLMProvider``: the one interface every LLM backend implements.

A provider implements one method, ``_complete(request)``; ``chat`` around it spends the
call budget, consults the cache, records the transcript and returns a typed ``ChatReply``
carrying an ``LLMCall`` (tokens, time, attempts, source).
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar, Literal

from foretab.llm.budget import CallBudget
from foretab.llm.options import LLMOptions
from foretab.llm.types import ChatMessage, ChatReply, ChatRequest, Completion, LLMCall, ToolSpec

if TYPE_CHECKING:
    from foretab.llm.cache import ResponseCache
    from foretab.llm.transcript import TranscriptRecorder


class LLMProvider(ABC):
    """Chat completions with tools, a budget, a cache and a transcript."""

    source: ClassVar[Literal["http", "replay"]] = "http"

    def __init__(
        self,
        options: LLMOptions,
        *,
        cache: ResponseCache | None = None,
        recorder: TranscriptRecorder | None = None,
    ) -> None:
        self.options = options
        self.cache = cache
        self.recorder = recorder

    @property
    def model(self) -> str:
        return self.options.model or ""

    def request(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec] | None = None,
        *,
        tool_choice: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> ChatRequest:
        """The exact request ``chat`` would send (options fill what is not given)."""
        return ChatRequest(
            model=self.model,
            messages=tuple(messages),
            tools=tuple(tools or ()),
            tool_choice=tool_choice if tools else None,
            temperature=self.options.temperature if temperature is None else temperature,
            max_tokens=self.options.max_tokens if max_tokens is None else max_tokens,
            seed=self.options.seed,
        )

    def chat(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec] | None = None,
        *,
        tool_choice: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        budget: CallBudget | None = None,
        purpose: str = "",
    ) -> ChatReply:
        """One chat completion; raises an ``LLMError`` subclass on every failure."""
        request = self.request(
            messages, tools, tool_choice=tool_choice, temperature=temperature, max_tokens=max_tokens
        )
        if budget is not None:
            budget.spend(purpose)
        started = time.perf_counter()
        source: Literal["http", "cache", "replay"] = self.source
        attempts, reasons = 0, ()
        completion = self.cache.get(request) if self.cache is not None else None
        if completion is not None:
            source = "cache"
        else:
            completion, attempts, reasons = self._complete(request)
            if self.cache is not None:
                self.cache.put(request, completion)
        call = LLMCall(
            key=request.key(),
            model=request.model,
            purpose=purpose,
            source=source,
            usage=completion.usage,
            elapsed_s=time.perf_counter() - started,
            attempts=attempts,
            retry_reasons=reasons,
        )
        if self.recorder is not None:
            self.recorder.record(request, completion, call)
        return ChatReply(
            content=completion.content,
            tool_calls=completion.tool_calls,
            finish_reason=completion.finish_reason,
            call=call,
        )

    @abstractmethod
    def _complete(self, request: ChatRequest) -> tuple[Completion, int, tuple[str, ...]]:
        """Send ``request``; return the completion, HTTP attempts made and retry reasons."""

    def close(self) -> None:  # noqa: B027  (optional hook: most providers hold nothing)
        """Release connections (the cache stays usable by others)."""

    def __enter__(self) -> LLMProvider:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
