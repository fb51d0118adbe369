"""A warm interpreter that forks one sandbox worker per run (saves ~0.5 s of imports).

The zygote is started once per foretab process with the same empty environment as a
plain sandbox child. It imports the allowed modules and never runs generated code; each
request makes it fork a worker that takes three pipes (data in, result out, stderr) as its
stdio, starts a new session, sets the resource limits and then hardens itself exactly like
a freshly started child. The parent reads the worker's pipes, kills its group and its uid
when done, and learns the exit status from the zygote.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import socket
import subprocess
import sys
import threading
from typing import Any

_lock = threading.Lock()
_instance: Zygote | None = None
_enabled = os.environ.get("FORETAB_SANDBOX_ZYGOTE", "1") != "0"


class ZygoteUnavailable(Exception):
    """The zygote could not start or died; the caller falls back to a fresh process."""


class Zygote:
    """One zygote process and the socket to it."""

    def __init__(self, source: str, env: dict[str, str]) -> None:
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock = parent
        self._process = subprocess.Popen(
            [sys.executable, "-I", "-B", "-c", source, "--zygote", str(child.fileno())],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=dict(env),
            cwd="/",
            pass_fds=(child.fileno(),),
            start_new_session=True,
        )
        child.close()
        self._send_lock = threading.Lock()
        self._pids: queue.Queue[int | None] = queue.Queue()
        self._exits: dict[int, int] = {}
        self._exited = threading.Condition()
        self.alive = True
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        buffer = b""
        try:
            while True:
                chunk = self._sock.recv(65536)
                if not chunk:
                    break
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    message = json.loads(line)
                    if "pid" in message:
                        self._pids.put(int(message["pid"]))
                    else:
                        with self._exited:
                            self._exits[int(message["exit"])] = int(message["returncode"])
                            self._exited.notify_all()
        except (OSError, ValueError):
            pass
        self.alive = False
        self._pids.put(None)
        with self._exited:
            self._exited.notify_all()

    def _send(self, message: dict[str, Any], fds: list[int]) -> None:
        body = json.dumps(message).encode()
        if not self.alive:
            raise ZygoteUnavailable("the sandbox zygote is not running")
        try:
            socket.send_fds(self._sock, [len(body).to_bytes(8, "big")], fds)
            self._sock.sendall(body)
        except OSError as error:
            self.alive = False
            raise ZygoteUnavailable(f"the sandbox zygote is gone: {error}") from None

    def kill(self, pid: int) -> None:
        """Have the zygote SIGKILL the worker's group (a no-op once it was reaped)."""
        with self._send_lock, contextlib.suppress(ZygoteUnavailable):
            self._send({"op": "kill", "pid": pid}, [])

    def fork(self, request: dict[str, Any], fds: list[int]) -> int:
        """Ask for a worker with ``fds`` as its stdin/stdout/stderr; returns its pid."""
        with self._send_lock:
            self._send({"op": "fork", **request}, fds)
            try:
                pid = self._pids.get(timeout=30)
            except queue.Empty:
                pid = None
        if pid is None:
            self.alive = False
            raise ZygoteUnavailable("the sandbox zygote did not fork a worker")
        return pid

    def exit_code(self, pid: int, timeout: float) -> int | None:
        """The worker's exit code (negative: killed by that signal), once the zygote reaped it."""
        with self._exited:
            self._exited.wait_for(lambda: pid in self._exits or not self.alive, timeout=timeout)
            return self._exits.pop(pid, None)

    def close(self) -> None:
        self.alive = False
        # shutdown() before close(): the reader thread blocked in recv() keeps the socket
        # open in the kernel, so close() alone never gave the zygote its end of file and it
        # was killed after the 2 s wait below (on every foretab exit).
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self._sock.close()
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            self._process.wait(timeout=2)
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()


def get(source: str, env: dict[str, str]) -> Zygote | None:
    """The running zygote (started on first use), or ``None`` where it is switched off."""
    global _instance
    if not _enabled:
        return None
    with _lock:
        if _instance is None or not _instance.alive:
            if _instance is not None:
                _instance.close()
            try:
                _instance = Zygote(source, env)
            except OSError:
                return None
        return _instance


def set_enabled(enabled: bool) -> None:
    """Switch the zygote on or off for this process (tests run both paths)."""
    global _enabled, _instance
    with _lock:
        _enabled = enabled
        if not enabled and _instance is not None:
            _instance.close()
            _instance = None


@atexit.register
def _shutdown() -> None:
    if _instance is not None:
        _instance.close()
