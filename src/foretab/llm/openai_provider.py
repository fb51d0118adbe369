"""``OpenAIProvider``: any OpenAI-compatible server through the official ``openai`` SDK.

The SDK's own retries are off: this class retries 408/409/429/5xx, timeouts and refused
connections itself with exponential backoff (honouring ``Retry-After``), so every attempt
is counted in the ``LLMCall`` and the wait is bounded by the options.
"""

from __future__ import annotations

import json
import random
import threading
import time
from typing import TYPE_CHECKING, Any

from foretab.extras import require
from foretab.llm.errors import (
    LLMConnectionError,
    LLMHTTPError,
    LLMReplyError,
    LLMTimeoutError,
)
from foretab.llm.options import LLMOptions
from foretab.llm.provider import LLMProvider
from foretab.llm.redact import mask, redact_url, register_options
from foretab.llm.types import ChatRequest, Completion, ToolCall, Usage

if TYPE_CHECKING:
    from foretab.llm.cache import ResponseCache
    from foretab.llm.transcript import TranscriptRecorder

_RETRY_STATUS = frozenset({408, 409, 429})


class OpenAIProvider(LLMProvider):
    """Chat completions over HTTP; ``options`` must name a base URL and a model."""

    def __init__(
        self,
        options: LLMOptions,
        *,
        cache: ResponseCache | None = None,
        recorder: TranscriptRecorder | None = None,
    ) -> None:
        super().__init__(options, cache=cache, recorder=recorder)
        self.base_url, _ = options.require_endpoint()
        require("openai", "llm")
        register_options(options)
        self.shown_url = redact_url(self.base_url)  # what messages name
        self._client: Any = None
        self._lock = threading.Lock()

    def _sdk(self) -> Any:
        # Imported on first use: `foretab --help` and the rule engine never pay for it.
        with self._lock:
            if self._client is None:
                import openai

                self._client = openai.OpenAI(
                    base_url=self.base_url,
                    api_key=self.options.api_key(),
                    timeout=self.options.timeout_s,
                    max_retries=0,
                )
            return self._client

    def _complete(self, request: ChatRequest) -> tuple[Completion, int, tuple[str, ...]]:
        import openai

        client = self._sdk()
        reasons: list[str] = []
        attempts_allowed = 1 + self.options.max_retries
        for attempt in range(1, attempts_allowed + 1):
            retry_after: float | None = None
            try:
                response = client.chat.completions.create(**request.body())
                return _completion(response), attempt, tuple(reasons)
            except openai.APITimeoutError:
                reason = f"timeout after {self.options.timeout_s:g} s"
                final: Exception = LLMTimeoutError(
                    f"{self.shown_url} did not answer within {self.options.timeout_s:g} s "
                    f"({attempt} attempt(s)); raise timeout_s in the LLM options or check "
                    "that the server is not overloaded"
                )
            except openai.APIConnectionError as error:
                reason = mask(f"connection failed: {error}")
                final = LLMConnectionError(
                    f"cannot reach the LLM server at {self.shown_url} ({mask(str(error))}; {attempt} "
                    "attempt(s)); is it running? Check --llm-base-url (it usually ends in /v1)"
                )
            except openai.APIStatusError as error:
                status = error.status_code
                reason = f"HTTP {status}"
                final = _status_error(error, self.shown_url, request.model, attempt)
                if status not in _RETRY_STATUS and status < 500:
                    raise final from None
                retry_after = _retry_after(error)
            reasons.append(reason)
            if attempt == attempts_allowed:
                raise final from None
            time.sleep(self._backoff(attempt, retry_after))
        raise AssertionError("unreachable")  # pragma: no cover

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.options.max_backoff_s)
        base = self.options.retry_backoff_s * 2 ** (attempt - 1)
        # Jitter spreads concurrent workers that failed together.
        return min(base * (1 + 0.25 * random.random()), self.options.max_backoff_s)

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def __del__(self) -> None:
        # A forgotten provider must not leave pooled sockets to warn at interpreter exit.
        client = getattr(self, "_client", None)
        if client is not None:
            client.close()


def _status_error(error: Any, base_url: str, model: str, attempt: int) -> LLMHTTPError:
    status = int(error.status_code)
    # A server may echo the key it refused ("Incorrect API key provided: sk-..."): masked.
    detail = mask(str(getattr(error, "message", "") or error))[:300]
    hint = {
        401: "set the API key in the variable named by api_key_env (FORETAB_LLM_API_KEY)",
        403: "the key is not allowed to use this model",
        404: f"check --llm-base-url (ends in /v1?) and that model {model!r} exists there",
        429: "the server is rate limiting: lower --workers or wait",
    }.get(status, "see the server's log")
    return LLMHTTPError(
        f"LLM server {base_url} answered HTTP {status} ({detail}) after {attempt} attempt(s); "
        f"{hint}",
        status=status,
    )


def _retry_after(error: Any) -> float | None:
    headers = getattr(getattr(error, "response", None), "headers", None) or {}
    value = headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _arguments_text(arguments: object) -> str:
    # Some servers send the arguments as a JSON object instead of a JSON string; the SDK
    # passes that through unvalidated. Keep it as the JSON text the model meant.
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        return arguments
    try:
        return json.dumps(arguments, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(arguments)


def _completion(response: Any) -> Completion:
    choices = getattr(response, "choices", None) or []
    if not choices:
        raise LLMReplyError(
            "the LLM server returned a completion without choices; check that the model "
            "supports chat completions"
        )
    choice = choices[0]
    message = choice.message
    calls = tuple(
        ToolCall(
            id=call.id or f"call_{i}",
            name=str(call.function.name or ""),
            arguments=_arguments_text(call.function.arguments),
        )
        for i, call in enumerate(message.tool_calls or ())
        if getattr(call, "function", None) is not None
    )
    usage = getattr(response, "usage", None)
    return Completion(
        content=message.content,
        tool_calls=calls,
        finish_reason=choice.finish_reason,
        usage=Usage(
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            total_tokens=int(getattr(usage, "total_tokens", 0) or 0),
        ),
    )
