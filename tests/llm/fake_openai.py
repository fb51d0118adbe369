"""A fake OpenAI-compatible server on loopback: real HTTP, scripted per test.

    def test_x(fake_openai):
        fake_openai.reply("```python\\ndef answer(df): return 1\\n```")
        fake_openai.error(500)                       # next request gets HTTP 500
        fake_openai.tool_call("sqlQueryTool", {"sql": "SELECT 1"})
        fake_openai.reply("late", delay_s=2.0)       # answers after 2 s
        fake_openai.garbage("not json")              # 200 with a non-JSON body
        fake_openai.respond_with(lambda body: "x")   # used once the queue is empty
        llm = fake_openai.provider()                 # OpenAIProvider on this server
        ...
        fake_openai.requests                         # every JSON body received, in order

Replies are served in the order scripted; when the queue is empty the ``respond_with``
handler answers, and without one the server returns HTTP 500 "no scripted reply left"
so a test that sends more requests than it scripted fails loudly.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

FAKE_MODEL = "fake-model"


@dataclass(frozen=True)
class Scripted:
    """One scripted HTTP response."""

    status: int = 200
    body: Any = None  # dict → JSON; str → sent as is
    delay_s: float = 0.0
    headers: Mapping[str, str] = field(default_factory=dict)


def completion_body(
    content: str | None = None,
    tool_calls: Sequence[tuple[str, str | Mapping[str, Any]]] = (),
    *,
    usage: tuple[int, int] = (12, 7),
    finish_reason: str | None = None,
    model: str = FAKE_MODEL,
) -> dict[str, Any]:
    """A ``chat.completion`` JSON object as OpenAI servers send it."""
    calls = [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {
                "name": name,
                "arguments": args if isinstance(args, str) else json.dumps(args),
            },
        }
        for i, (name, args) in enumerate(tool_calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": f"chatcmpl-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish_reason or ("tool_calls" if calls else "stop"),
            }
        ],
        "usage": {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": usage[0] + usage[1],
        },
    }


Responder = Callable[[dict[str, Any]], "Scripted | str | dict[str, Any]"]


class FakeOpenAIServer:
    """Threaded HTTP server speaking ``POST /v1/chat/completions`` and ``GET /v1/models``."""

    def __init__(self, model: str = FAKE_MODEL) -> None:
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._queue: deque[Scripted] = deque()
        self._responder: Responder | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._providers: list[Any] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    # -- scripting ----------------------------------------------------------------------

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def options(self, **overrides: Any) -> Any:
        """``LLMOptions`` for this server, with fast retries for tests."""
        from foretab.llm import LLMOptions

        values: dict[str, Any] = {
            "base_url": self.base_url,
            "model": self.model,
            "timeout_s": 5.0,
            "retry_backoff_s": 0.01,
            "max_backoff_s": 0.05,
        }
        values.update(overrides)
        return LLMOptions(**values)

    def provider(self, **overrides: Any) -> Any:
        """An ``OpenAIProvider`` on this server, closed with it (no stray sockets)."""
        from foretab.llm import OpenAIProvider

        llm = OpenAIProvider(self.options(**overrides))
        self._providers.append(llm)
        return llm

    def push(self, scripted: Scripted) -> FakeOpenAIServer:
        with self._lock:
            self._queue.append(scripted)
        return self

    def reply(
        self,
        content: str | None = None,
        *,
        tool_calls: Sequence[tuple[str, str | Mapping[str, Any]]] = (),
        usage: tuple[int, int] = (12, 7),
        delay_s: float = 0.0,
        finish_reason: str | None = None,
    ) -> FakeOpenAIServer:
        """Queue a normal completion (text and/or tool calls)."""
        body = completion_body(
            content, tool_calls, usage=usage, finish_reason=finish_reason, model=self.model
        )
        return self.push(Scripted(body=body, delay_s=delay_s))

    def replies(self, *contents: str) -> FakeOpenAIServer:
        for content in contents:
            self.reply(content)
        return self

    def tool_call(
        self, name: str, arguments: str | Mapping[str, Any], *, content: str | None = None
    ) -> FakeOpenAIServer:
        return self.reply(content, tool_calls=[(name, arguments)])

    def error(
        self,
        status: int = 500,
        message: str = "scripted error",
        *,
        retry_after: float | None = None,
        delay_s: float = 0.0,
    ) -> FakeOpenAIServer:
        headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
        body = {"error": {"message": message, "type": "server_error", "code": status}}
        return self.push(Scripted(status=status, body=body, delay_s=delay_s, headers=headers))

    def garbage(self, text: str = "<html>not json</html>", status: int = 200) -> FakeOpenAIServer:
        return self.push(Scripted(status=status, body=text))

    def respond_with(self, responder: Responder | None) -> FakeOpenAIServer:
        """Answer every request past the queue with ``responder(request_body)``."""
        self._responder = responder
        return self

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def close(self) -> None:
        """Stop serving (idempotent: a test may close early to prove nothing is sent)."""
        if self._closed:
            return
        self._closed = True
        for llm in self._providers:
            llm.close()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    # -- serving ------------------------------------------------------------------------

    def _next(self, body: dict[str, Any]) -> Scripted:
        with self._lock:
            self.requests.append(body)
            if self._queue:
                return self._queue.popleft()
            responder = self._responder
        if responder is None:
            return Scripted(
                status=500,
                body={"error": {"message": "fake server: no scripted reply left"}},
            )
        try:
            result = responder(body)
        except Exception as error:
            return Scripted(
                status=500,
                body={"error": {"message": f"fake server responder failed: {error!r}"}},
            )
        if isinstance(result, Scripted):
            return result
        if isinstance(result, str):
            return Scripted(body=completion_body(result, model=self.model))
        return Scripted(body=result)


def _handler_for(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # The headers and the body go out as two small writes; with Nagle on, the body
        # waits for the client's delayed ACK of the headers: ~45 ms a request, not ~2 ms.
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: tests read ``server.requests`` instead."""

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._send(Scripted(body={"object": "list", "data": [{"id": server.model}]}))
            else:
                self._send(Scripted(status=404, body={"error": {"message": "not found"}}))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if not self.path.partition("?")[0].rstrip("/").endswith("/chat/completions"):
                self._send(Scripted(status=404, body={"error": {"message": "not found"}}))
                return
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._send(Scripted(status=400, body={"error": {"message": "bad JSON"}}))
                return
            server.headers.append(dict(self.headers.items()))
            scripted = server._next(body)
            if scripted.delay_s:
                time.sleep(scripted.delay_s)
            self._send(scripted)

        def _send(self, scripted: Scripted) -> None:
            payload = (
                scripted.body
                if isinstance(scripted.body, str)
                else json.dumps(scripted.body if scripted.body is not None else {})
            ).encode("utf-8")
            try:
                self.send_response(scripted.status)
                content_type = "text/html" if isinstance(scripted.body, str) else "application/json"
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                for name, value in scripted.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test): nothing to answer

    return Handler


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A fresh fake server for one test; see the module docstring for scripting."""
    server = FakeOpenAIServer()
    try:
        yield server
    finally:
        server.close()
