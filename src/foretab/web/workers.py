"""``foretab serve`` as one process or as N worker processes listening on one port.

With ``workers > 1`` the parent binds the port (on Linux one ``SO_REUSEPORT`` socket per
worker, elsewhere one shared socket) and starts N processes (``spawn``: nothing of the
parent's state is inherited but its socket). Each builds its own warm engine pool over the
store (its own connections and guard worker) and runs uvicorn with foretab's guarded
protocol (``foretab.web.server``) on its socket; the kernel spreads new connections over
the sockets (``bind_each``). Each pool checks the store for a new
ingest on its own, so every worker switches generation within ``reload_check_s`` of it.

The parent only supervises: it waits for every worker to report that its engines are
warm (or why it could not start: then it stops the others and fails), restarts a worker
that dies, and on SIGINT/SIGTERM stops them all (each finishes its requests in flight).

Limits are per worker: ``engines``, the queue, and the connections one client address may
hold (``ServerLimits``); a server of N workers allows N times each.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

from foretab.errors import ForetabError
from foretab.forecast.sources import FutureMode
from foretab.llm.settings import LLMSettings

log = logging.getLogger("foretab.web")


@dataclass(frozen=True, slots=True)
class ServeSpec:
    """Everything a worker needs to build its server (picklable: sent to ``spawn``)."""

    db: str
    host: str = "127.0.0.1"
    port: int = 8000
    token: str | None = None
    future: FutureMode = "model"
    allow_oracle: bool = False
    #: Engines per worker. One process answers on one core at a time (the GIL): two
    #: engines overlap one's wait for its SQL with the other's work, more only contend
    #: (docs/benchmarks/latency.md: 1 / 2 / 3 / 4 engines 107 / 134 / 133 / 122 req/s).
    engines: int = 2
    #: Host header values answered (``*``: any); the CLI adds --host to loopback's.
    allowed_hosts: tuple[str, ...] = ("127.0.0.1", "localhost", "::1")
    cors_origins: tuple[str, ...] = ()
    engine: str = "rules"
    llm: LLMSettings = field(default_factory=LLMSettings)
    workers: int = 1
    #: Requests that may wait for an engine, per worker; beyond them a 503.
    queue: int = 64
    #: Seconds from a request's arrival to its answer before a 504.
    request_timeout_s: float = 30.0
    reload_check_s: float = 2.0
    #: PostgreSQL: foretab's own connections open at most, per database, per worker
    #: (None: ``pg_pool_default(engines)``); the guard's, one per engine, come on top.
    pg_pool: int | None = None
    #: Connections one client address may hold per worker (a reverse proxy is one client).
    client_connections: int = 32
    log_level: str = "warning"
    #: The conversations' SQLite file every worker shares (docs/conversations.md); the
    #: supervisor makes a private one for ``workers > 1``; ":memory:" for one process.
    conversations_path: str = ":memory:"


def pg_pool_default(engines: int) -> int:
    """The default ``pg_pool``: one connection per engine, twice, and two more.

    Twice: while a new ingest's engines replace the old ones; two: the generation checks
    and the warm engine being built.
    """
    return 2 * engines + 2


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True, slots=True)
class Started:
    """What a worker reports once warm (the parent prints it once)."""

    store: str
    projects: int
    reference: str | None
    engines: tuple[str, ...]
    future_problem: tuple[str, tuple[str, ...]] | None


def _build(spec: ServeSpec, worker: int) -> tuple[Any, Any, Any]:
    """(app, pool, provider) of one worker; the caller closes pool and provider."""
    from foretab.engine import provider_for
    from foretab.store.location import StoreLocation
    from foretab.web.app import AppSettings, create_app
    from foretab.web.pool import EnginePool, agent_factory, engine_factory

    if StoreLocation.parse(spec.db).backend == "postgresql":
        from foretab.backend.postgres import use_connection_pool

        use_connection_pool(spec.pg_pool or pg_pool_default(spec.engines))
    provider = provider_for(spec.engine, spec.llm)
    agents = None if provider is None else (spec.engine, agent_factory(provider))
    try:
        pool = EnginePool(
            engine_factory(spec.db),
            size=spec.engines,
            default=spec.future,
            agents=agents,
            reload_check_s=spec.reload_check_s,
            queue=spec.queue,
            request_timeout_s=spec.request_timeout_s,
        )
    except BaseException:
        if provider is not None:
            provider.close()
        raise
    try:
        pool.prewarm()  # the first burst of requests must not pay for opening engines
        settings = AppSettings(
            token=spec.token,
            allowed_hosts=spec.allowed_hosts,
            cors_origins=spec.cors_origins,
            allow_oracle=spec.allow_oracle,
            worker=worker,
            conversations_path=spec.conversations_path,
        )
        return create_app(pool, settings), pool, provider
    except BaseException:
        pool.close()
        if provider is not None:
            provider.close()
        raise


def _started(pool: Any) -> Started:
    problem = pool.future_problem()
    return Started(
        store=pool.store_name,
        projects=len(pool.projects),
        reference=pool.reference.iso if pool.reference is not None else None,
        engines=tuple(pool.engine_names),
        future_problem=None if problem is None else (problem.message, problem.suggestions),
    )


def _run_uvicorn(spec: ServeSpec, app: Any, sock: socket.socket | None) -> None:
    import uvicorn

    from foretab.web.server import ServerLimits, server_config

    config = server_config(
        app,
        host=spec.host,
        port=spec.port,
        engines=spec.engines,
        limits=ServerLimits(max_connections_per_client=spec.client_connections),
        log_level=spec.log_level,
    )
    server = uvicorn.Server(config)
    # uvicorn re-raises the signal that stopped it once it has shut down; with the default
    # handler SIGTERM would then end the process before the caller closes its engines.
    previous = {s: signal.signal(s, _stopped) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.run(sockets=None if sock is None else [sock])
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _stopped(*_: Any) -> None:
    """The handler uvicorn re-raises its stop signal to: the server has stopped already."""


def serve(spec: ServeSpec, announce: Any = None) -> None:
    """Run the server until SIGINT/SIGTERM; ``announce(Started)`` once it is warm."""
    if spec.workers <= 1:
        app, pool, provider = _build(spec, 0)
        try:
            if announce is not None:
                announce(_started(pool))
            _run_uvicorn(spec, app, None)
        finally:
            pool.close()
            if provider is not None:
                provider.close()
            _close_pg_pools()
        return
    _Supervisor(spec).run(announce)


def bind(host: str, port: int) -> socket.socket:
    """One listening socket (``workers`` share it where ``bind_each`` cannot be used)."""
    return _listen(host, port, reuse_port=False)


def bind_each(host: str, port: int, count: int) -> list[socket.socket]:
    """``count`` listening sockets on one port, one per worker (Linux's ``SO_REUSEPORT``).

    The kernel spreads new connections over the sockets, so each worker gets its share. On
    one shared socket a worker's event loop accepts every connection waiting when it wakes
    (asyncio takes up to the backlog at once): a client that opens its 20 keep-alive
    connections together gave one worker 16 or 17 of them in two runs of three, and the
    two workers 170–181 requests a second against 217 with a 9 / 11 split
    (docs/benchmarks/latency.md). The supervisor keeps every socket open, so connections
    that reach a worker being restarted wait for it instead of being refused.

    The port is first bound without ``SO_REUSEPORT``: a port another server already holds
    is an error, never a port shared with it. Elsewhere: one shared socket, as before.
    """
    if count <= 1 or sys.platform != "linux" or not hasattr(socket, "SO_REUSEPORT"):
        return [bind(host, port)] * max(1, count)
    probe = _listen(host, port, reuse_port=False)
    port = probe.getsockname()[1]  # port 0: the one the system chose
    probe.close()
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sockets.append(_listen(host, port, reuse_port=True))
    except ForetabError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def _listen(host: str, port: int, *, reuse_port: bool) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as error:
        sock.close()
        raise ForetabError(f"cannot listen on {host}:{port}: {error.strerror}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _worker_main(spec: ServeSpec, sock: socket.socket, worker: int, report: Any) -> None:
    """One worker process: build the warm pool, report, serve on the shared socket."""
    try:
        app, pool, provider = _build(spec, worker)
    except ForetabError as error:
        report.send(("error", type(error).__name__, error.message, error.suggestions))
        report.close()
        return
    except BaseException as error:
        report.send(("error", type(error).__name__, str(error), ()))
        report.close()
        raise
    try:
        report.send(("ready", _started(pool)))
        report.close()
        _run_uvicorn(spec, app, sock)
    finally:
        pool.close()
        if provider is not None:
            provider.close()
        _close_pg_pools()


def _close_pg_pools() -> None:
    from foretab.backend.postgres import close_connection_pools

    close_connection_pools()


class _Supervisor:
    def __init__(self, spec: ServeSpec) -> None:
        self.spec = spec
        self.context = multiprocessing.get_context("spawn")
        self.processes: dict[int, Any] = {}
        self.stopping = False

    def _start(self, worker: int, sock: socket.socket) -> Any:
        ours, theirs = self.context.Pipe(duplex=False)
        process = self.context.Process(
            target=_worker_main,
            args=(self.spec, sock, worker, theirs),
            name=f"foretab-serve-{worker}",
        )
        process.start()
        theirs.close()
        self.processes[worker] = process
        return ours

    def _await_ready(self, worker: int, pipe: Any) -> Started:
        try:
            message = pipe.recv()
        except EOFError:
            raise ForetabError(
                f"worker {worker} of foretab serve exited before it was ready (exit code "
                f"{self.processes[worker].exitcode}); see the messages above"
            ) from None
        finally:
            pipe.close()
        if message[0] == "error":
            _, _kind, text, suggestions = message
            raise ForetabError(text, suggestions=suggestions)
        return message[1]

    def _stop(self, *_: Any) -> None:
        self.stopping = True

    def run(self, announce: Any) -> None:
        # A conversation's next question may reach any worker: they share one file of
        # conversations, in a folder only this user can read, removed when serving stops.
        folder = tempfile.mkdtemp(prefix="foretab-conversations-")
        try:
            self.spec = dataclasses.replace(
                self.spec, conversations_path=os.path.join(folder, "conversations.sqlite")
            )
            self._run(announce)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _run(self, announce: Any) -> None:
        sockets = bind_each(self.spec.host, self.spec.port, self.spec.workers)
        previous = {s: signal.signal(s, self._stop) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            pipes = {w: self._start(w, sockets[w]) for w in range(self.spec.workers)}
            started = [self._await_ready(w, p) for w, p in pipes.items()]
            if announce is not None:
                announce(started[0])
            while not self.stopping:
                sentinels = [p.sentinel for p in self.processes.values()]
                multiprocessing.connection.wait(sentinels, timeout=0.5)
                for worker, process in list(self.processes.items()):
                    if process.exitcode is not None and not self.stopping:
                        print(
                            f"foretab serve: worker {worker} exited (code {process.exitcode});"
                            " starting it again",
                            file=sys.stderr,
                        )
                        with contextlib.suppress(ForetabError):
                            self._await_ready(worker, self._start(worker, sockets[worker]))
                        time.sleep(0.5)  # a worker that cannot start must not spin
        finally:
            for process in self.processes.values():
                if process.exitcode is None:
                    process.terminate()  # uvicorn's SIGTERM: finish what is in flight
            deadline = time.monotonic() + 10
            for process in self.processes.values():
                process.join(timeout=max(0.1, deadline - time.monotonic()))
                if process.exitcode is None:
                    process.kill()
                    process.join()
            for sock in set(sockets):
                sock.close()
            for s, handler in previous.items():
                signal.signal(s, handler)
