"""Typed messages, requests, replies and call records of the provider layer."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from foretab.llm.errors import LLMReplyError


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ToolCall(_Frozen):
    """One function call the model asked for; ``arguments`` is the raw JSON it wrote."""

    id: str
    name: str
    arguments: str = ""

    def parsed_arguments(self) -> dict[str, Any]:
        """The arguments as a JSON object, or ``LLMReplyError`` saying what is wrong."""
        try:
            value = json.loads(self.arguments or "{}")
        except json.JSONDecodeError as error:
            raise LLMReplyError(
                f"tool call {self.name!r} has arguments that are not JSON ({error.msg}): "
                f"{self.arguments[:200]!r}"
            ) from None
        if not isinstance(value, dict):
            raise LLMReplyError(
                f"tool call {self.name!r} must have a JSON object as arguments, got "
                f"{type(value).__name__}"
            )
        return value

    def to_openai(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


class ChatMessage(_Frozen):
    """One chat message (system, user, assistant with optional tool calls, tool result)."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None

    @classmethod
    def system(cls, content: str) -> ChatMessage:
        return cls(role="system", content=content)

    @classmethod
    def user(cls, content: str) -> ChatMessage:
        return cls(role="user", content=content)

    @classmethod
    def assistant(cls, content: str | None, tool_calls: tuple[ToolCall, ...] = ()) -> ChatMessage:
        return cls(role="assistant", content=content, tool_calls=tool_calls)

    @classmethod
    def tool_result(cls, tool_call_id: str, content: str) -> ChatMessage:
        return cls(role="tool", content=content, tool_call_id=tool_call_id)

    def to_openai(self) -> dict[str, Any]:
        data: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            data["tool_calls"] = [call.to_openai() for call in self.tool_calls]
        if self.tool_call_id is not None:
            data["tool_call_id"] = self.tool_call_id
        return data


class ToolSpec(_Frozen):
    """A function the model may call; ``parameters`` is its JSON Schema."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})

    def to_openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


class ChatRequest(_Frozen):
    """Everything sent to ``/chat/completions``; ``key()`` identifies it for cache/replay."""

    model: str
    messages: tuple[ChatMessage, ...]
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None

    def body(self) -> dict[str, Any]:
        """The request body as the SDK sends it (unset fields left out)."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [m.to_openai() for m in self.messages],
        }
        if self.tools:
            body["tools"] = [t.to_openai() for t in self.tools]
        for name in ("tool_choice", "temperature", "max_tokens", "seed"):
            value = getattr(self, name)
            if value is not None:
                body[name] = value
        return body

    def key(self) -> str:
        """SHA-256 of the canonical JSON body: same request, same key (base URL excluded)."""
        text = json.dumps(self.body(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Usage(_Frozen):
    """Token counts as the server reported them (0 where it reported none)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class Completion(_Frozen):
    """The useful part of a chat completion: what is cached, recorded and replayed."""

    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    usage: Usage = Usage()


class LLMCall(_Frozen):
    """One logical call: tokens, wall time, HTTP attempts and where the reply came from."""

    key: str
    model: str
    purpose: str = ""
    source: Literal["http", "cache", "replay"] = "http"
    usage: Usage = Usage()
    elapsed_s: float = 0.0
    attempts: int = 1
    retry_reasons: tuple[str, ...] = ()


class ChatReply(_Frozen):
    """What ``LLMProvider.chat`` returns: the reply and the record of the call."""

    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    call: LLMCall

    @property
    def text(self) -> str:
        """The reply's text ('' when the model only called tools or said nothing)."""
        return self.content or ""
