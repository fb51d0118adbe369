"""Errors of the LLM provider layer; all are ``ForetabError``s with a fix in the message."""

from __future__ import annotations

from foretab.errors import ForetabError


class LLMError(ForetabError):
    """Root of the provider layer's errors."""


class LLMConfigError(LLMError):
    """No endpoint or model configured, or a bad option / config file."""


class LLMNotConfiguredError(LLMConfigError):
    """No endpoint or no model is configured at all (an LLM engine asked for without one)."""


class LLMConnectionError(LLMError):
    """The server could not be reached (after the configured retries)."""


class LLMTimeoutError(LLMError):
    """The server did not answer within ``timeout_s`` (after the configured retries)."""


class LLMHTTPError(LLMError):
    """The server answered with an HTTP error that retrying does not fix (or retries ran out)."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status

    def to_dict(self) -> dict[str, object]:
        data = super().to_dict()
        data["status"] = self.status
        return data


class LLMReplyError(LLMError):
    """The server's reply is not a usable chat completion (no choices, bad tool arguments)."""


class LLMBudgetExceeded(LLMError):
    """A question used up its call budget (``max_calls_per_question``)."""


class LLMReplayMiss(LLMError):
    """Replay mode: the transcript holds no reply for this exact request."""
