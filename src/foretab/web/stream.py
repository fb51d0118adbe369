"""Large JSON bodies sent with back-pressure, and dropped when the client stops reading.

uvicorn hands a whole body to the socket's buffer at once: one 360 MB ``/api/sql`` answer
that the client never read stayed in server memory. ``StreamedJSON`` sends 64 KiB at a
time, each chunk only once the previous one has drained (uvicorn's flow control), and
gives up on a client that has not accepted a chunk within ``send_timeout_s``.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
from starlette.responses import Response

log = logging.getLogger("foretab.web")
CHUNK_BYTES = 64 * 1024


class StreamedJSON(Response):
    """``body`` (JSON bytes, already capped by the caller) in chunks, with a send deadline."""

    media_type = "application/json"

    def __init__(self, body: bytes, status_code: int = 200, send_timeout_s: float = 30.0) -> None:
        super().__init__(b"", status_code=status_code, media_type=self.media_type)
        self.payload = body
        self.send_timeout_s = send_timeout_s
        self.headers["content-length"] = str(len(body))

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        view = memoryview(self.payload)
        offsets = range(0, len(view), CHUNK_BYTES) if view else [0]
        for start in offsets:
            chunk = bytes(view[start : start + CHUNK_BYTES])
            more = start + CHUNK_BYTES < len(view)
            try:
                with anyio.fail_after(self.send_timeout_s):
                    await send({"type": "http.response.body", "body": chunk, "more_body": more})
            except TimeoutError:
                client = scope.get("client") or ("?", 0)
                log.warning(
                    "dropped a client (%s) that accepted no data for %g s (%d of %d bytes sent)",
                    client[0], self.send_timeout_s, start, len(view),
                )  # fmt: skip
                return  # the server closes the connection: the rest is never buffered
