"""Run the app with uvicorn on a free loopback port in a background thread (browser tests)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serving(app: FastAPI, *, guarded: bool = False) -> Iterator[str]:
    """The base URL of ``app`` served on loopback until the block ends.

    ``guarded``: with ``foretab serve``'s own uvicorn config (web/server.py).
    """
    port = free_port()
    if guarded:
        from foretab.web.server import server_config

        config = server_config(app, host="127.0.0.1", port=port, engines=1)
    else:
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start within 10 s")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


#: How long a served process may take to answer /api/health. It detects a start that hangs
#: or fails; it is not a speed check (that is `foretab bench serve`'s job). A start takes
#: 4–7 s on an idle 2-core machine, and more than 60 s was seen with the suite on both cores
#: beside other work (a load average of 13), so the limit is generous.
STARTUP_TIMEOUT_S = 180.0


@contextmanager
def serve_process(
    db: str, *args: str, log_path: Path, timeout_s: float = STARTUP_TIMEOUT_S
) -> Iterator[Any]:
    """``foretab serve --db DB ARGS`` in its own process on a free loopback port.

    Yields ``(url, process)`` once /api/health answers; the child imports this very foretab
    (the test's ``sys.path``). Stopped with SIGTERM at the end (killed after 15 s).
    """
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("FORETAB_TOKEN", None)
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "foretab", "serve", "--db", db, "--port", str(port), *args],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + timeout_s
            while True:
                if process.poll() is not None:
                    raise RuntimeError(f"foretab serve exited early:\n{log_path.read_text()}")
                try:
                    if httpx.get(url + "/api/health", timeout=1).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"foretab serve did not answer within {timeout_s:g} s; its log:\n"
                        f"{log_path.read_text()[-4000:]}"
                    )
                time.sleep(0.1)
            yield url, process
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
