"""What every request passes before the app: host check, bearer token, body size, headers.

One pure ASGI middleware (no per-request task switch): it answers refusals itself with the
JSON error object, and adds security headers to every response.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from starlette.exceptions import HTTPException

from foretab.web.errors import (
    HostNotAllowedError,
    HttpError,
    RequestTooLargeError,
    UnauthorizedError,
    error_json,
)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")

# The page loads its own files only: no CDN, no inline script, no framing.
_SECURITY_HEADERS = (
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        b"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
)


@dataclass(frozen=True, slots=True)
class GateSettings:
    """How the gate is set.

    ``token``: bearer token required on /api/* (None: none, loopback only);
    ``allowed_hosts``: Host header values answered (``*``: any).
    """

    token: str | None
    allowed_hosts: tuple[str, ...]
    max_body_bytes: int


class Gate:
    """Refuses bad hosts, missing tokens and oversized bodies; adds security headers."""

    def __init__(self, app: ASGIApp, settings: GateSettings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            await _send_error(send, refusal)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *_SECURITY_HEADERS]
            await send(message)

        await self.app(scope, self._limited(receive), send_with_headers)

    def _refusal(self, scope: Scope, headers: dict[str, str]) -> HttpError | None:
        allowed = self.settings.allowed_hosts
        host = _hostname(headers.get("host", ""))
        if "*" not in allowed and host not in allowed:
            return HostNotAllowedError(
                f"this server does not answer for host {host!r}; use one of "
                f"{', '.join(allowed)} (to serve other names, start `foretab serve` with "
                "--host and --token)"
            )
        token = self.settings.token
        # A CORS preflight (OPTIONS) never carries the token; it reads nothing either.
        preflight = scope["method"] == "OPTIONS"
        if token is not None and scope["path"].startswith("/api/") and not preflight:
            given = headers.get("authorization", "")
            scheme, _, value = given.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(
                value.strip().encode(), token.encode()
            ):
                return UnauthorizedError(
                    "this server needs an access token: send 'Authorization: Bearer TOKEN' "
                    "with the token `foretab serve` was started with (--token)"
                )
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self._max):
            return self._too_large()
        return None

    @property
    def _max(self) -> int:
        return self.settings.max_body_bytes

    def _too_large(self) -> RequestTooLargeError:
        return RequestTooLargeError(
            f"the request body is over {self._max:,} bytes; send one question or query at a time"
        )

    def _limited(self, receive: Receive) -> Receive:
        # A chunked body has no Content-Length: count what arrives and stop at the limit.
        received = 0

        async def limited() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self._max:
                    # FastAPI re-raises HTTPException from body reading; the app's handler
                    # turns it into the JSON error object.
                    raise HTTPException(413, self._too_large().message)
            return message

        return limited


def _hostname(host: str) -> str:
    """The name of a Host header value; the whole value when it is not ``name[:port]``.

    ``[::1]evil.com`` or ``127.0.0.1:x`` are not a host and a port, so they match nothing.
    """
    if host.startswith("["):  # [::1]:8000
        address, _, rest = host[1:].partition("]")
        return address if rest == "" or _is_port(rest) else host
    if host.count(":") == 1:
        name, _, port = host.partition(":")
        return name if port.isdigit() and port.isascii() else host
    return host


def _is_port(rest: str) -> bool:
    return rest.startswith(":") and rest[1:].isdigit() and rest[1:].isascii()


async def _send_error(send: Send, error: HttpError) -> None:
    body = error_json(error).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *_SECURITY_HEADERS,
    ]
    if isinstance(error, UnauthorizedError):
        headers.append((b"www-authenticate", b'Bearer realm="foretab"'))
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
