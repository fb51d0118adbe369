"""Guard worker processes: started on demand, reused while healthy, killed at deadlines.

A worker is a plain ``python -c 'from foretab.sql.worker import main; main()'`` child talking over two pipes. An
executor holds one worker for its lifetime and hands it back on close, so opening the
next executor costs a connection, not an interpreter start. A worker that was killed or
died is never reused.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from pathlib import Path

from foretab.errors import QueryError

_MAX_IDLE = 2


class WorkerDied(QueryError):
    """The worker exited (or was killed) before it answered."""


class DeadlineExceeded(QueryError):
    """The worker did not answer in time and was killed."""


class Worker:
    """One worker process and its two pipe ends."""

    def __init__(self, memory_bytes: int, preopen: str | None = None) -> None:
        self.memory_bytes = memory_bytes
        to_worker_r, to_worker_w = os.pipe()
        from_worker_r, from_worker_w = os.pipe()
        env = dict(os.environ)
        # The child must import this very foretab (a worktree, an editable install, ...).
        package_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
        # Fewer malloc arenas: less address space reserved for nothing under RLIMIT_AS.
        env.setdefault("MALLOC_ARENA_MAX", "2")
        try:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    # Not ``-m``: the messages' classes must pickle as foretab.sql.worker.*.
                    "import sys; from foretab.sql.worker import main; main(sys.argv[1:])",
                    str(to_worker_r),
                    str(from_worker_w),
                    str(memory_bytes),
                    *([preopen] if preopen else []),
                ],
                pass_fds=(to_worker_r, from_worker_w),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env,
            )
        finally:
            os.close(to_worker_r)
            os.close(from_worker_w)
        self._tx = Connection(to_worker_w, readable=False)
        self._rx = Connection(from_worker_r, writable=False)
        self.alive = True
        with _live_lock:
            _live.add(self)

    def call(self, message: object, deadline_s: float) -> object:
        """Send ``message`` and wait up to ``deadline_s`` for the reply; kill on overrun."""
        self.send(message)
        return self.receive(deadline_s)

    def send(self, message: object) -> None:
        """Send ``message``; read its reply with ``receive`` (replies come in order)."""
        if not self.alive:
            raise WorkerDied("the guard worker is gone")
        try:
            self._tx.send(message)
        except (EOFError, OSError, BrokenPipeError):
            code = self.kill()
            raise WorkerDied(f"the guard worker exited (code {code})") from None

    def receive(self, deadline_s: float) -> object:
        """The next reply, waiting up to ``deadline_s``; kill on overrun."""
        if not self.alive:
            raise WorkerDied("the guard worker is gone")
        try:
            if not self._rx.poll(deadline_s):
                self.kill()
                raise DeadlineExceeded(f"no answer within {deadline_s:g} s")
            return self._rx.recv()
        except (EOFError, OSError, BrokenPipeError):
            code = self.kill()
            raise WorkerDied(f"the guard worker exited (code {code})") from None

    def kill(self) -> int | None:
        """Stop the process for sure; returns its exit code."""
        self.alive = False
        if self.process.poll() is None:
            self.process.kill()
        code = self.process.wait()
        for end in (self._tx, self._rx):
            with contextlib.suppress(OSError):
                end.close()
        with _live_lock:  # waited: its Popen may be collected now
            _live.discard(self)
        return code


_idle: list[Worker] = []
_lock = threading.Lock()
#: Every worker not killed yet, idle or held by an executor: a running worker's ``Popen``
#: must never be garbage. When the cyclic collector frees an executor dropped in a reference
#: cycle, it finalizes everything the cycle holds in the order of its lists, and a worker
#: reused from the idle pool is older than its executor: its ``Popen.__del__`` would run
#: first and warn that the process still runs, before the executor's ``__del__`` kills it
#: (docs/development.md). Held here, only the executor is garbage; ``kill`` removes it.
_live: set[Worker] = set()
_live_lock = threading.Lock()  # not ``_lock``: ``acquire`` kills workers while holding it


def acquire(memory_bytes: int) -> Worker:
    """A healthy idle worker with this memory cap, or a new one."""
    with _lock:
        for worker in list(_idle):
            if worker.memory_bytes == memory_bytes:
                _idle.remove(worker)
                if worker.alive and worker.process.poll() is None:
                    return worker
                worker.kill()
    return Worker(memory_bytes)


def prestart(memory_bytes: int, preopen: str | None = None) -> None:
    """Start a spare worker now (after a kill), so the next query does not wait for it.

    ``preopen``: a DuckDB store the worker opens as soon as it starts, while this process
    does other work; its guard then finds the database open (``foretab.sql.worker``).
    """
    worker = Worker(memory_bytes, preopen)
    with _lock:
        if len(_idle) < _MAX_IDLE:
            _idle.append(worker)
            return
    worker.kill()


def release(worker: Worker) -> None:
    """Hand a worker back after its session closed; kept only while healthy."""
    if not worker.alive or worker.process.poll() is not None:
        worker.kill()
        return
    with _lock:
        if len(_idle) < _MAX_IDLE:
            _idle.append(worker)
            return
    worker.kill()


@atexit.register
def _shutdown() -> None:
    """Kill every worker still running: the idle ones, and those of executors not closed."""
    with _lock:
        _idle[:] = []
    with _live_lock:
        workers = list(_live)
    for worker in workers:
        worker.kill()
