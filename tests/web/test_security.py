"""Issue 28's HTTP items, each against a real server on loopback where it is about sockets.

The oracle (item 4): off unless `foretab serve --allow-oracle`; the page does not offer it.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import uvicorn

from foretab.errors import ForetabError
from foretab.web import AppSettings, EnginePool, create_app
from foretab.web.server import PROTOCOLS, ServerLimits, server_config
from tests.web.conftest import TEST_HOSTS, banded_factory
from tests.web.server import free_port, serving

FORECAST = "What will the average price of Bund Garden in Huangpu District, Shanghai be next month?"


@pytest.fixture(scope="module")
def model_pool(mini_duckdb: str):
    pool = EnginePool(banded_factory(mini_duckdb), size=2, default="model")
    yield pool
    pool.close()


def test_oracle_is_refused_unless_the_server_allows_it(model_pool) -> None:
    with serving(create_app(model_pool)) as url:
        refused = httpx.post(url + "/api/ask", json={"question": FORECAST, "future": "oracle"})
        assert refused.status_code == 403, refused.text
        error = refused.json()["error"]
        assert error["type"] == "OracleNotAllowedError" and "--allow-oracle" in error["message"]
        assert httpx.post(url + "/api/ask", json={"question": FORECAST}).status_code == 200
        page = httpx.get(url + "/").text
        assert 'value="oracle"' not in page and 'value="model"' in page
        assert httpx.get(url + "/api/health").json()["oracle"] is False


def test_oracle_is_served_with_the_evaluation_flag(model_pool) -> None:
    with serving(create_app(model_pool, AppSettings(allow_oracle=True))) as url:
        answer = httpx.post(url + "/api/ask", json={"question": FORECAST, "future": "oracle"})
        assert answer.status_code == 200 and answer.json()["future_source"] == "oracle"
        assert 'value="oracle"' in httpx.get(url + "/").text
        assert httpx.get(url + "/api/health").json()["oracle"] is True


def test_an_oracle_default_needs_the_flag(mini_duckdb: str) -> None:
    pool = EnginePool(banded_factory(mini_duckdb), size=1, default="oracle")
    try:
        with pytest.raises(ForetabError, match="--allow-oracle"):
            create_app(pool, AppSettings(allowed_hosts=TEST_HOSTS))
    finally:
        pool.close()


# -- secrets in errors (item 8): serve --engine timefore ------------------------------------

SECRET_KEY = "sk-served-secret-6666"
URL_SECRET = "sk-served-url-7777"


def test_http_errors_never_show_the_key(mini_duckdb: str, monkeypatch) -> None:
    from foretab.llm import OpenAIProvider, load_options
    from foretab.web.pool import agent_factory
    from tests.llm.fake_openai import FakeOpenAIServer, Scripted

    monkeypatch.setenv("FORETAB_LLM_API_KEY", SECRET_KEY)
    server = FakeOpenAIServer()
    server.respond_with(
        lambda body: Scripted(
            status=401, body={"error": {"message": f"bad key {SECRET_KEY} ({URL_SECRET})"}}
        )
    )
    url = f"http://user:{URL_SECRET}@127.0.0.1:{server.port}/v1"
    llm = OpenAIProvider(load_options(base_url=url, model="fake-model", max_retries=0))
    pool = EnginePool(
        banded_factory(mini_duckdb),
        size=1,
        default="model",
        agents=("timefore", agent_factory(llm)),
    )
    try:
        with serving(create_app(pool)) as base:
            question = "Which project in Huangpu District had the highest price in 2020?"
            reply = httpx.post(
                base + "/api/ask", json={"question": question, "engine": "timefore"}, timeout=60
            )
    finally:
        pool.close()
        llm.close()
        server.close()
    assert reply.status_code >= 400, reply.text
    assert "401" in reply.text
    assert SECRET_KEY not in reply.text and URL_SECRET not in reply.text, reply.text


# -- the server itself, on real loopback sockets: items 2, 3 and 9 ---------------------------


@pytest.fixture(params=PROTOCOLS)
def protocol(request) -> str:
    """Each HTTP parser `foretab serve` may run on: every rule holds on both."""
    return str(request.param)


@contextmanager
def guarded_server(
    app, limits: ServerLimits | None = None, http: str | None = None
) -> Iterator[int]:
    """``app`` under the same uvicorn configuration as `foretab serve`; yields the port."""
    port = free_port()
    server = uvicorn.Server(
        server_config(app, host="127.0.0.1", port=port, engines=1, limits=limits, http=http)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def raw_request(
    port: int, request: bytes, source: str = "127.0.0.1", timeout: float = 10.0
) -> bytes:
    with socket.create_connection(
        ("127.0.0.1", port), timeout=timeout, source_address=(source, 0)
    ) as sock:
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
            if b"\r\n\r\n" in b"".join(chunks) and _complete(b"".join(chunks)):
                break
        return b"".join(chunks)


def _complete(data: bytes) -> bool:
    head, _, body = data.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return len(body) >= int(line.split(b":")[1])
    return False


def get(path: str, host: str = "127.0.0.1") -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode()


def post_json(path: str, doc: object) -> bytes:
    body = json.dumps(doc).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


@pytest.mark.parametrize(
    "host", ["[::1]evil.com", "[::1]:evil", "127.0.0.1:x", "localhost.evil.com"]
)
def test_a_host_header_with_a_suffix_is_refused(model_pool, host: str, protocol: str) -> None:
    with guarded_server(create_app(model_pool), http=protocol) as port:
        reply = raw_request(port, get("/api/health", host))
        assert reply.startswith(b"HTTP/1.1 421"), reply[:200]
        assert raw_request(port, get("/api/health", "[::1]:8000")).startswith(b"HTTP/1.1 200")


@pytest.mark.slow
def test_health_shows_no_path_and_answers_while_engines_are_busy(
    model_pool, mini_duckdb, protocol: str
) -> None:
    folder = str(Path(mini_duckdb).parent)
    slow = "SELECT count(*) FROM " + ", ".join(f"foretab_catalog t{i}" for i in range(9))
    with guarded_server(create_app(model_pool), http=protocol) as port:
        health = raw_request(port, get("/api/health"))
        assert (
            folder not in health.decode()
            and b'"store":"' + Path(mini_duckdb).name.encode() in health
        )
        with ThreadPoolExecutor(6) as pool:
            busy = [
                pool.submit(raw_request, port, post_json("/api/sql", {"sql": slow}), timeout=60)
                for _ in range(2)  # one per engine of the pool
            ]
            time.sleep(0.5)  # both engines are running a statement now
            started = time.perf_counter()
            reply = raw_request(port, get("/api/health"))
            waited = time.perf_counter() - started
            assert all(b"HTTP/1.1" in f.result() for f in busy)
    assert reply.startswith(b"HTTP/1.1 200") and waited < 0.5, waited


# 144 rows of 20,000 U+0001 (bound: chr() is not on the guard's list): 2.9 MB as Python
# strings, 17 MB as JSON (each control character is six bytes escaped).
AMPLIFIER = {
    "sql": "SELECT lpad('', 20000, ?) AS v FROM foretab_catalog a, foretab_catalog b",
    "params": ["\x01"],
}


def test_sql_response_bytes_are_capped(mini_duckdb, protocol: str) -> None:
    pool = EnginePool(banded_factory(mini_duckdb), size=1, default="model")
    try:
        app = create_app(pool, AppSettings(max_response_bytes=2**20))
        with guarded_server(app, http=protocol) as port:
            reply = raw_request(port, post_json("/api/sql", AMPLIFIER), timeout=30)
    finally:
        pool.close()
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    assert len(body) <= 2**20, len(body)  # 20,000 control characters are 120,000 bytes of JSON
    doc = json.loads(body)
    assert doc["truncated"] is True and 0 < len(doc["rows"]) < 144
    assert doc["rows"][0][0] == "\x01" * 20000


@pytest.mark.slow  # waits seconds for the server to give up on the client
def test_a_client_that_stops_reading_is_dropped(mini_duckdb, protocol: str) -> None:
    pool = EnginePool(banded_factory(mini_duckdb), size=1, default="model")
    try:
        app = create_app(pool, AppSettings(send_timeout_s=1.0))
        with guarded_server(app, http=protocol) as port:
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect(("127.0.0.1", port))
            sock.sendall(post_json("/api/sql", AMPLIFIER))
            time.sleep(4.0)  # reads nothing: the server must give up on it
            sock.settimeout(5.0)
            received = bytearray()
            with contextlib.suppress(ConnectionResetError):
                while chunk := sock.recv(1 << 20):
                    received.extend(chunk)
            sock.close()
    finally:
        pool.close()
    head, _, body = bytes(received).partition(b"\r\n\r\n")
    lines = [line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")]
    length = int(lines[0].split(b":")[1])
    assert length > 5_000_000  # ~17 MB of JSON was due
    assert len(body) < length / 2, (len(body), length)  # closed after a few chunks


@pytest.mark.slow
def test_slow_headers_neither_starve_others_nor_stay_open(model_pool, protocol: str) -> None:
    limits = ServerLimits(header_timeout_s=1.5, body_timeout_s=1.5, max_connections_per_client=8)
    with guarded_server(create_app(model_pool), limits, protocol) as port:
        slow = []
        for _ in range(70):  # slowloris from 127.0.0.1: headers that never end
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-a: b\r\n")
            slow.append(sock)
        half = socket.create_connection(
            ("127.0.0.1", port), timeout=5, source_address=("127.0.0.3", 0)
        )
        half.sendall(b"POST /api/sql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{")
        try:
            started = time.perf_counter()
            other = raw_request(port, get("/api/health"), source="127.0.0.2")
            assert other.startswith(b"HTTP/1.1 200"), other[:300]
            assert time.perf_counter() - started < 1.0
            # Past the cap, the same client is told so at once.
            assert raw_request(port, get("/api/health")).startswith(b"HTTP/1.1 503")
            time.sleep(2.5)
            closed = 0
            for sock in [*slow, half]:
                with contextlib.suppress(OSError):
                    data = sock.recv(65536)
                    closed += data == b"" or data.startswith(b"HTTP/1.1 503")
            assert closed == 71, closed  # every slow connection was closed by the server
        finally:
            for sock in [*slow, half]:
                sock.close()


def read_responses(sock: socket.socket, count: int) -> list[bytes]:
    """``count`` whole responses (each with a Content-Length) read off ``sock``."""
    data, replies = b"", []
    while len(replies) < count:
        while not (b"\r\n\r\n" in data and _complete(data)):
            chunk = sock.recv(65536)
            assert chunk, f"closed after {len(replies)} responses: {data[:200]!r}"
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        replies.append(head + b"\r\n\r\n" + rest[:length])
        data = rest[length:]
    return replies


@pytest.mark.slow  # waits for two deadlines, on each parser
def test_deadlines_follow_each_request_of_a_kept_connection(model_pool, protocol: str) -> None:
    limits = ServerLimits(header_timeout_s=0.8, body_timeout_s=0.8)
    keep = b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    with guarded_server(create_app(model_pool), limits, protocol) as port:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            # Two pipelined requests, then a third after a pause shorter than the deadline:
            # each response ends one request's time and starts the next one's.
            sock.sendall(keep + keep)
            assert all(r.startswith(b"HTTP/1.1 200") for r in read_responses(sock, 2))
            time.sleep(0.5)
            sock.sendall(keep)
            assert read_responses(sock, 1)[0].startswith(b"HTTP/1.1 200")
            sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never ends
            started = time.perf_counter()
            assert sock.recv(65536) == b""  # closed by the server ...
            assert 0.3 < time.perf_counter() - started < 3.0  # ... at the header deadline
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(post_json("/api/sql", {"sql": "SELECT 1"})[:-3])  # the body stops short
            started = time.perf_counter()
            assert sock.recv(65536) == b""
            assert 0.3 < time.perf_counter() - started < 3.0
