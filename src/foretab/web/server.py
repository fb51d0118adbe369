"""uvicorn as ``foretab serve`` runs it: read deadlines and a per-client connection cap.

uvicorn waits forever for a request's headers, and its ``limit_concurrency`` counts every
open connection: 70 connections that never finish their headers made every other request
a 503. ``guarded_protocol`` is uvicorn's httptools protocol (or its h11 one, without
httptools) with three more rules:

* the headers of each request must be complete ``header_timeout_s`` after the connection
  opened or the previous response ended (a slow drip does not extend it);
* its body must be complete ``body_timeout_s`` after its headers;
* one client address holds at most ``max_connections_per_client`` connections; the next
  one gets a 503 and is closed at once, so one client cannot use up the server's slots.

Slow *readers* are the response's business: ``foretab.web.stream`` drops a client that
takes longer than ``send_timeout_s`` to accept a chunk.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("foretab.web")


@dataclass(frozen=True, slots=True)
class ServerLimits:
    """Deadlines and caps of the HTTP server (docs/safety.md)."""

    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    max_connections_per_client: int = 32


def _busy_response() -> bytes:
    body = json.dumps(
        {
            "error": {
                "type": "TooManyConnectionsError",
                "message": "this client has too many connections open to the server; "
                "close some (or wait for them to finish) and retry",
                "suggestions": [],
            }
        }
    ).encode()
    head = (
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


#: The HTTP parsers ``guarded_protocol`` takes: "httptools" (C, llhttp), "h11" (pure Python).
PROTOCOLS = ("httptools", "h11")


def default_protocol() -> str:
    """The parser ``foretab serve`` runs: httptools when installed ([serve]), else h11."""
    return "httptools" if importlib.util.find_spec("httptools") is not None else "h11"


def guarded_protocol(limits: ServerLimits, http: str | None = None) -> type[asyncio.Protocol]:
    """A protocol class for ``uvicorn.Config(http=...)``, with its own per-client counts.

    ``http``: uvicorn's protocol to extend, "httptools" or "h11" (None: ``default_protocol``);
    both keep the same rules (tests/web/test_security.py runs them over each).
    """
    http = http or default_protocol()
    if http == "h11":
        from uvicorn.protocols.http.h11_impl import H11Protocol as Base
    elif http == "httptools":
        from uvicorn.protocols.http.httptools_impl import (  # type: ignore[assignment]
            HttpToolsProtocol as Base,
        )
    else:
        raise ValueError(f"unknown HTTP protocol {http!r}; one of {', '.join(PROTOCOLS)}")
    open_by_client: dict[str, int] = {}
    busy = _busy_response()

    class Guarded(Base):  # type: ignore[misc, valid-type]
        _rejected = False
        _client_host = ""
        _deadline: asyncio.TimerHandle | None = None
        _kind = ""  # what the armed deadline waits for: "headers" or "body"

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            peer = transport.get_extra_info("peername")
            host = str(peer[0]) if peer else ""
            if open_by_client.get(host, 0) >= limits.max_connections_per_client:
                self._rejected = True
                transport.write(busy)
                transport.close()
                return
            open_by_client[host] = open_by_client.get(host, 0) + 1
            self._client_host = host
            super().connection_made(transport)
            self._arm(limits.header_timeout_s, "headers")

        def connection_lost(self, exc: Exception | None) -> None:
            if self._rejected:
                return
            self._disarm()
            left = open_by_client.get(self._client_host, 1) - 1
            if left > 0:
                open_by_client[self._client_host] = left
            else:
                open_by_client.pop(self._client_host, None)
            super().connection_lost(exc)

        def _arm(self, seconds: float, kind: str) -> None:
            self._disarm()
            self._kind = kind
            self._deadline = self.loop.call_later(seconds, self._expired, kind, seconds)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
            self._kind = ""

        def _expired(self, kind: str, seconds: float) -> None:
            self._deadline = None
            if not self.transport.is_closing():
                log.info(
                    "closed a connection from %s: the request %s did not arrive within %g s",
                    self._client_host, kind, seconds,
                )  # fmt: skip
                self.transport.close()

    if http == "h11":

        class GuardedH11Protocol(Guarded):
            # h11 hands over events only as data arrives or a response ends: the request
            # whose headers arrived last tells which deadline applies.
            _request: Any = None

            def data_received(self, data: bytes) -> None:
                super().data_received(data)
                self._track_request()

            def on_response_complete(self) -> None:
                super().on_response_complete()
                if not self.transport.is_closing():
                    self._arm(limits.header_timeout_s, "headers")  # the next request's
                    self._track_request()  # a pipelined request may have started already

            def _track_request(self) -> None:
                cycle = self.cycle
                if cycle is None or cycle is self._request:
                    if cycle is not None and not cycle.more_body and self._kind == "body":
                        self._disarm()
                    return
                self._request = cycle  # its headers are complete
                if cycle.more_body:
                    self._arm(limits.body_timeout_s, "body")
                else:
                    self._disarm()

        return GuardedH11Protocol

    class GuardedHttpToolsProtocol(Guarded):
        # httptools calls back as it parses: the deadlines follow its callbacks.
        def on_headers_complete(self) -> None:
            previous = self.cycle
            super().on_headers_complete()
            if self.cycle is not previous:  # a request (not an upgrade) has its headers
                self._arm(limits.body_timeout_s, "body")

        def on_message_complete(self) -> None:
            super().on_message_complete()
            if self._kind == "body":  # not a deadline armed since (an early response's)
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            cycle = self.cycle
            # A pipelined request already received has its own deadline (or none left).
            if not self.transport.is_closing() and (cycle is None or cycle.response_complete):
                self._arm(limits.header_timeout_s, "headers")  # the next request's

    return GuardedHttpToolsProtocol


def server_config(
    app: Any,
    *,
    host: str,
    port: int,
    engines: int,
    limits: ServerLimits | None = None,
    log_level: str = "warning",
    http: str | None = None,
) -> Any:
    """The ``uvicorn.Config`` of ``foretab serve`` (tests run the same one on loopback)."""
    import uvicorn

    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=guarded_protocol(limits or ServerLimits(), http),
        log_level=log_level,
        server_header=False,
        # Beyond this many open connections uvicorn answers 503 instead of queueing.
        limit_concurrency=max(64, engines * 16),
        timeout_graceful_shutdown=5,
    )
