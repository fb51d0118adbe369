"""The scale-out recipe of docs/web-api.md ("Scaling out"), run for real.

Two ``foretab serve`` processes over one PostgreSQL store, behind Debian's nginx on
loopback (its own config in a temp folder, not a daemon), while a client keeps asking
through the proxy; the store is re-ingested in the middle. Every request must succeed, and
both servers must switch to the new generation (their /api/health, the endpoint the
proxy's checks use, says which one they serve).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import psycopg
import pytest

from foretab.core.months import Month
from tests.web.server import free_port, serve_process
from tests.web.test_pool_reload import QUESTION, ingest_scaled

pytestmark = pytest.mark.slow

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)

#: The config of docs/web-api.md with the test's ports and folder.
NGINX_CONF = """\
worker_processes 1;
daemon off;
pid {folder}/nginx.pid;
error_log {folder}/error.log warn;
events {{ worker_connections 512; }}
http {{
    log_format upstream '$status $upstream_addr $upstream_status $request';
    access_log {folder}/access.log upstream;
    client_body_temp_path {folder}/body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;

    upstream foretab {{
        server 127.0.0.1:{port_a} max_fails=2 fail_timeout=5s;
        server 127.0.0.1:{port_b} max_fails=2 fail_timeout=5s;
        keepalive 32;
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://foretab;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host localhost;
            proxy_connect_timeout 2s;
            proxy_read_timeout 35s;
            proxy_next_upstream error timeout http_502 http_503 http_504 non_idempotent;
            proxy_next_upstream_tries 2;
        }}
        location = /api/health {{
            proxy_pass http://foretab;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host localhost;
            proxy_connect_timeout 1s;
            proxy_read_timeout 2s;
            proxy_next_upstream error timeout http_502 http_503 http_504;
        }}
    }}
}}
"""


@pytest.fixture
def pg_store(pg_server) -> Iterator[str]:  # type: ignore[no-untyped-def]
    name = pg_server.fresh_dbname("scaleout")
    yield pg_server.url(name)
    with psycopg.connect(pg_server.url("postgres"), autocommit=True) as conn:
        for each in (name, f"{name}_future"):
            conn.execute(f'DROP DATABASE IF EXISTS "{each}" WITH (FORCE)')


def start_nginx(folder: Path, port: int, port_a: int, port_b: int) -> subprocess.Popen[bytes]:
    for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (folder / sub).mkdir(exist_ok=True)
        (folder / sub).chmod(0o777)  # nginx's workers drop root for nobody
    conf = folder / "nginx.conf"
    conf.write_text(NGINX_CONF.format(folder=folder, port=port, port_a=port_a, port_b=port_b))
    assert NGINX is not None
    check = subprocess.run(
        [NGINX, "-t", "-p", str(folder), "-c", str(conf), "-e", str(folder / "error.log")],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stderr
    process = subprocess.Popen(
        [NGINX, "-p", str(folder), "-c", str(conf), "-e", str(folder / "error.log")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=2).status_code == 200:
                return process
        except httpx.TransportError:
            pass
        assert process.poll() is None, (folder / "error.log").read_text()
        assert time.monotonic() < deadline, "nginx did not answer within 10 s"
        time.sleep(0.1)


def stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGQUIT)  # nginx: graceful stop
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.mark.skipif(NGINX is None, reason="nginx is not installed (Debian package nginx)")
def test_two_servers_behind_nginx_switch_generation_with_no_failed_request(
    pg_store: str, tmp_path: Path
) -> None:
    ingest_scaled(pg_store, tmp_path, 1.0, Month(2021, 12))
    args = ("--workers", "1", "--engines", "2", "--future", "none", "--pg-pool", "6")
    args += ("--client-connections", "64")  # every request comes from nginx's address
    with ExitStack() as stack:
        url_a, _ = stack.enter_context(serve_process(pg_store, *args, log_path=tmp_path / "a.log"))
        url_b, _ = stack.enter_context(serve_process(pg_store, *args, log_path=tmp_path / "b.log"))
        port = free_port()
        ports = [int(u.rsplit(":", 1)[1]) for u in (url_a, url_b)]
        nginx = start_nginx(tmp_path, port, *ports)
        stack.callback(stop, nginx)
        proxy = f"http://127.0.0.1:{port}"
        old = {httpx.get(u + "/api/health").json()["generation"] for u in (url_a, url_b)}
        assert len(old) == 1 and None not in old

        statuses: Counter[str] = Counter()
        prices: list[float] = []
        done = threading.Event()

        def client() -> None:
            with httpx.Client(base_url=proxy, timeout=40) as c:
                while not done.is_set():
                    try:
                        r = c.post("/api/ask", json={"question": QUESTION})
                        statuses[str(r.status_code)] += 1
                        if r.status_code == 200:
                            prices.append(float(r.json()["answer"][0][0]))
                    except httpx.HTTPError as error:
                        statuses[type(error).__name__] += 1

        threads = [threading.Thread(target=client) for _ in range(4)]
        for t in threads:
            t.start()
        try:
            time.sleep(2)
            first = prices[0]
            ingest_scaled(pg_store, tmp_path, 2.0, Month(2021, 11))  # in the middle of the load
            deadline = time.monotonic() + 60
            while True:
                health = [httpx.get(u + "/api/health").json() for u in (url_a, url_b)]
                if all(h["generation"] not in old for h in health):
                    break
                assert time.monotonic() < deadline, f"a server kept the old ingest: {health}"
                time.sleep(0.2)
            time.sleep(1.5)  # requests on the new generation, through the proxy
        finally:
            done.set()
            for t in threads:
                t.join(timeout=60)
        assert len({h["generation"] for h in health}) == 1
        assert {h["reference_month"] for h in health} == {"2021-11"}
        assert set(statuses) == {"200"}, statuses  # 0 failed requests
        assert statuses["200"] >= 20
        assert prices[-1] == pytest.approx(2 * first, abs=0.02)
        assert set(prices) <= {first, prices[-1]}  # old or new generation, never a mix
        # Through the proxy, /api/health answers; and both servers took traffic.
        assert httpx.get(proxy + "/api/health").json()["status"] == "ok"
        upstreams = Counter(
            line.split()[1] for line in (tmp_path / "access.log").read_text().splitlines()
        )
        assert {f"127.0.0.1:{p}" for p in ports} <= set(upstreams), upstreams
    assert not os.path.exists(tmp_path / "nginx.pid") or nginx.poll() is not None
