"""Errors of the HTTP layer, and the HTTP status every ``ForetabError`` maps to.

The body is always the CLI's error object (``ErrorDoc``: ``{"error": {type, message,
suggestions}}``), so a client handles ``foretab ask --json`` and ``POST /api/ask`` alike.
"""

from __future__ import annotations

from foretab.core.schema import ErrorBody, ErrorDoc, dumps_plain
from foretab.errors import (
    ForecastError,
    ForetabError,
    GuardError,
    QueryError,
    QuestionError,
    StoreError,
)
from foretab.timefore.errors import EngineChoiceError


class HttpError(ForetabError):
    """A request the server refuses before any engine sees it; ``status`` is its code."""

    status = 400


class BadRequestError(HttpError):
    """The request body or query string is malformed."""

    status = 422


class UnauthorizedError(HttpError):
    """No or a wrong bearer token."""

    status = 401


class NotFoundError(HttpError):
    """No such endpoint."""

    status = 404


class ConversationNotFoundError(NotFoundError):
    """No such conversation for this token: unknown, expired, or another token's."""


class ConversationFullError(HttpError):
    """A conversation has had the server's most turns: a new one must be started."""

    status = 422


class MethodNotAllowedError(HttpError):
    """The endpoint exists but not for this HTTP method."""

    status = 405


class RequestTooLargeError(HttpError):
    """The request body is over the server's limit."""

    status = 413


class HostNotAllowedError(HttpError):
    """The ``Host`` header names a host this server does not answer for (DNS rebinding)."""

    status = 421


class OracleNotAllowedError(HttpError):
    """``future: oracle`` on a server whose operator did not turn the oracle on."""

    status = 403


class ServerBusyError(HttpError):
    """Every engine is busy and the queue of waiting requests is full: retry later."""

    status = 503
    #: Seconds the client should wait before retrying (the ``Retry-After`` header).
    retry_after_s = 1


class RequestTimeoutError(HttpError):
    """The request waited and ran longer than the server's per-request timeout."""

    status = 504


class InternalError(HttpError):
    """An unexpected failure; the message says where to look, never a traceback."""

    status = 500


def status_for(error: ForetabError) -> int:
    """The HTTP status for an error: 4xx for anything the client can fix."""
    if isinstance(error, HttpError):
        return error.status
    if isinstance(error, GuardError | QueryError):
        return 400
    if isinstance(error, QuestionError | ForecastError | EngineChoiceError):
        return 422
    if isinstance(error, StoreError):
        return 503
    return 400


def error_doc(error: ForetabError) -> ErrorDoc:
    """The JSON body for ``error``: the same object ``--json`` prints."""
    from foretab.llm.redact import mask

    data = error.to_dict()
    return ErrorDoc(
        error=ErrorBody(
            type=str(data["type"]),
            message=mask(str(data["message"])),  # never the API key or URL credentials
            suggestions=[mask(str(s)) for s in data.get("suggestions", [])],  # type: ignore[union-attr]
            rule=str(data["rule"]) if data.get("rule") is not None else None,
        )
    )


def error_json(error: ForetabError) -> str:
    """``error_doc`` as the CLI prints it: ``rule`` only where there is one."""
    data = error_doc(error).model_dump(mode="json", exclude_none=True)
    return dumps_plain(data, ensure_ascii=False)
