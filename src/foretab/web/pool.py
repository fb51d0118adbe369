"""Engines for concurrent requests, one checked out per request.

No DuckDB connection or cursor is ever used by two threads at once.

At most ``size`` requests run at a time (an anyio capacity limiter); an idle engine is
reused, a new one is built only when every existing one is busy (so at most ``size`` per
kind: engine name and future mode). Every engine over one store generation, rules or LLM,
shares the first one's ``StoreContext`` (the entity index, the BM25 caption index, the
catalog): built once and only read afterwards. Each engine has its own store and guard
connections and its own future source. An LLM engine (``timefore``, ``vanilla``, ``hybrid``), when the
server offers one, is pooled the same way; the LLM provider behind it is thread-safe and
shared.

An ingest that replaces the store under a running server is picked up between requests:
at most every ``reload_check_s`` seconds a checkout asks the store which generation is
current; on a new one the pool builds a fresh warm engine (new indexes, catalog,
reference month) and serves every later request from it. Engines of the old generation
finish the request they are answering and are closed when it is checked in — a request
sees the old store or the new one, never a mix, and nothing has to be restarted. Each
process of ``foretab serve --workers N`` has its own pool, and each pool checks on its own.

Requests beyond ``size`` wait in a bounded queue: once ``size + queue`` requests are
running or waiting, the next one is refused at once (``ServerBusyError``, 503 with
``Retry-After``) instead of making every later request wait longer. A request that has
not been answered ``request_timeout_s`` after it arrived (waiting included) gets a 504;
its work, which a thread cannot be made to drop, finishes in the background and keeps its
place in the count until then, so a run of slow requests fills the queue rather than the
machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import anyio
import anyio.to_thread

from foretab.core.answer import Answer
from foretab.core.catalog import CatalogEntry, EntityEntry
from foretab.core.months import Month
from foretab.engine import Engine, StaleContextError, StoreContext
from foretab.errors import ForetabError
from foretab.forecast.sources import FutureMode
from foretab.store.stores import current_generation
from foretab.timefore.errors import EngineChoiceError
from foretab.web.errors import RequestTimeoutError, ServerBusyError

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Builds a rules engine for a future mode; ``warm`` is the first one, whose context to share.
EngineFactory = Callable[[FutureMode, Engine | None], Engine]


class Answering(Protocol):
    """What a request needs of an engine (``Engine`` or ``foretab.engine.HybridEngine``)."""

    def ask(self, question: str) -> Answer: ...

    def close(self) -> None: ...


#: Builds the LLM engine named for a future mode over the warm engine's context
#: (``foretab.engine.build_engine``).
AgentFactory = Callable[[str, FutureMode, StoreContext], Answering]


def agent_factory(llm: Any, model: str | None = None) -> AgentFactory:
    """LLM engines with the (thread-safe) provider ``llm``."""

    def build(engine: str, mode: FutureMode, context: StoreContext) -> Answering:
        from foretab.engine import build_engine

        return build_engine(context, engine, llm=llm, future=mode, model=model)

    return build


def engine_factory(db: str, model: str | None = None) -> EngineFactory:
    """The default factory: ``Engine.open(db, future=mode)``, sharing the warm one's context."""

    def build(mode: FutureMode, warm: Engine | None) -> Engine:
        return Engine.open(db if warm is None else warm.context, future=mode, model=model)

    return build


class EnginePool:
    """A bounded set of engines over one store, checked out one per request."""

    def __init__(
        self,
        factory: EngineFactory,
        *,
        size: int = 4,
        default: FutureMode,
        agents: tuple[str, AgentFactory] | None = None,
        reload_check_s: float = 2.0,
        queue: int | None = None,
        request_timeout_s: float | None = None,
    ) -> None:
        if size < 1:
            raise ForetabError(f"the engine pool needs at least 1 engine, got {size}")
        if queue is not None and queue < 0:
            raise ForetabError(f"the request queue cannot be negative, got {queue}")
        self.size = size
        #: Requests that may wait for an engine (None: no bound).
        self.queue = queue
        #: Seconds from arrival to answer before a request gets a 504 (None: no limit).
        self.request_timeout_s = request_timeout_s
        self._in_flight = 0  # running or waiting; only touched on the event loop
        self.default: FutureMode = default
        self._factory = factory
        self._agents = agents
        #: Engines a request may ask for: always the rules, plus the LLM engine if configured.
        self.engine_names: tuple[str, ...] = ("rules",) + ((agents[0],) if agents else ())
        self._lock = threading.Lock()
        self._idle: dict[tuple[str, str], list[Answering]] = {}
        self._all: list[Answering] = []
        self._retired: list[Answering] = []  # an older generation's, still answering
        self._limiter = anyio.CapacityLimiter(size)
        self._refresh_limiter = anyio.CapacityLimiter(1)
        self.reload_check_s = reload_check_s
        self._checked_at = time.monotonic()
        self._reloading = threading.Lock()  # one generation check or rebuild at a time
        # Built now: a missing or foreign store fails at start-up, not on the first request.
        self._adopt(factory(default, None))
        self.store_name = self._warm.store.location.describe()
        #: What clients see: the store's file (or database) name, never its path or host.
        self.public_name = _public_name(self._warm.store.location)

    def _adopt(self, warm: Engine) -> None:
        """Serve ``warm``'s store generation from now on.

        The caller retires the old engines (and holds ``self._lock``, except at construction).
        """
        self._warm = warm
        self._all = [warm]
        self._idle = {("rules", self.default): [warm]}
        # Catalog and projects are read once per generation and cached: shared read-only.
        self.catalog: tuple[CatalogEntry, ...] = tuple(warm.store.catalog())
        self.projects: tuple[EntityEntry, ...] = tuple(warm.store.entities())
        self.reference: Month = warm.reference
        self.generation: str | None = warm.store.generation

    async def refreshed(self) -> None:
        """``refresh`` off the event loop (a switch builds an engine), for the store routes."""
        # Its own thread slot: a check must not wait behind long queries on every engine.
        await anyio.to_thread.run_sync(self.refresh, limiter=self._refresh_limiter)

    def refresh_due(self) -> bool:
        """Whether ``refresh`` would check the store now (cheap: no read, no thread)."""
        return (
            time.monotonic() - self._checked_at >= self.reload_check_s
            and not self._reloading.locked()
        )

    def refresh(self) -> bool:
        """Switch to a newer ingest of the store if there is one; True if it switched.

        Checks at most every ``reload_check_s`` seconds (one small read). A store that is
        missing or unreadable at that moment keeps the open generation serving: an ingest
        in progress or a broken new store must not take the server down.
        """
        with self._lock:
            now = time.monotonic()
            if now - self._checked_at < self.reload_check_s:
                return False
            self._checked_at = now
        if not self._reloading.acquire(blocking=False):
            return False  # another request is checking; this one serves what is open
        try:
            try:
                current = current_generation(self._warm.store.location)
            except ForetabError as error:
                log.warning("could not check the store for a new ingest: %s", error)
                return False
            if current is None or current == self.generation:
                return False
            try:
                warm = self._factory(self.default, None)
            except ForetabError as error:
                log.warning("a new ingest of the store could not be opened: %s", error)
                return False
            with self._lock:
                idle = [e for engines in self._idle.values() for e in engines]
                # Checked-out engines finish their request and are closed at check-in.
                self._retired.extend(e for e in self._all if not _among(e, idle))
                self._adopt(warm)
            for engine in idle:
                engine.close()
            log.info("serving the store's new ingest %s", self.generation)
            return True
        finally:
            self._reloading.release()

    def examples(
        self, pick: Callable[[tuple[EntityEntry, ...], Month, Callable[[str], object]], list[str]]
    ) -> list[str]:
        """Example questions chosen by ``pick``, checked with the warm engine's planner."""
        return pick(self.projects, self.reference, self._warm.planner.plan)

    def prewarm(self) -> None:
        """Build every engine of the default kind now, so no request waits for one."""
        key = ("rules", self.default)
        # Taking ``size`` engines at once reuses the idle ones and builds the rest (at start-up
        # nothing else holds one).
        built = [self._checkout(key) for _ in range(self.size)]
        for engine in built:
            # The future source too (a model to load, the future store to read); a store
            # without one still serves history questions, so its error waits for a question.
            with contextlib.suppress(ForetabError):
                engine.future  # type: ignore[attr-defined]  # noqa: B018
            self._checkin(key, engine)

    def future_problem(self) -> ForetabError | None:
        """Why the default future source cannot load (e.g. no trained model), or None."""
        try:
            self._warm.future  # noqa: B018 - loads the model or the future store
        except ForetabError as error:
            return error
        return None

    @property
    def engines(self) -> int:
        """How many engines have been built (for health and tests)."""
        with self._lock:
            return len(self._all)

    async def run(self, mode: FutureMode | None, work: Callable[[Engine], T]) -> T:
        """Run ``work`` on a rules engine of ``mode`` in a worker thread (``size`` at once)."""
        key = ("rules", mode or self.default)
        return await self._admitted(key, work)

    async def ask(
        self,
        engine: str,
        mode: FutureMode | None,
        question: str,
        then: Callable[[Answer], T],
    ) -> T:
        """``then`` of the answer to ``question`` by the engine named (one the server offers).

        ``then`` (e.g. rendering JSON) runs in the worker thread too, off the event loop.
        """
        return await self.with_engine(engine, mode, lambda e: then(e.ask(question)))

    async def with_engine(
        self, engine: str, mode: FutureMode | None, work: Callable[[Answering], T]
    ) -> T:
        """``work`` on an engine of the name (one the server offers) and mode, in a worker thread."""
        if engine not in self.engine_names:
            offered = ", ".join(self.engine_names)
            raise EngineChoiceError(
                f"this server does not offer engine {engine!r} (it offers {offered}); the "
                "LLM engines are served by `foretab serve --engine timefore` (or vanilla, "
                "hybrid) with --llm-base-url and --llm-model",
                suggestions=tuple(self.engine_names),
            )
        key = (engine, mode or self.default)
        return await self._admitted(key, work)

    @property
    def in_flight(self) -> int:
        """Requests running or waiting for an engine (timed-out ones until their work ends)."""
        return self._in_flight

    async def _admitted(self, key: tuple[str, str], work: Callable[[Any], T]) -> T:
        """``work`` on an engine of ``key`` in a worker thread, if the queue has room."""
        if self.queue is not None and self._in_flight >= self.size + self.queue:
            raise ServerBusyError(
                f"the server is busy: {self.size} questions are being answered and "
                f"{self.queue} are waiting; retry in a moment",
                suggestions=("retry after the number of seconds in the Retry-After header",),
            )
        self._in_flight += 1
        task = asyncio.ensure_future(
            anyio.to_thread.run_sync(self._with_engine, key, work, limiter=self._limiter)
        )
        task.add_done_callback(self._finished)
        try:
            # Shielded: a timeout or a client that goes away must not orphan the engine.
            return await asyncio.wait_for(asyncio.shield(task), self.request_timeout_s)
        except TimeoutError:
            raise RequestTimeoutError(
                f"no answer within the server's request timeout of {self.request_timeout_s:g} "
                "s (waiting for an engine included); retry, or ask a simpler question",
                suggestions=(),
            ) from None

    def _finished(self, task: asyncio.Future[Any]) -> None:
        self._in_flight -= 1
        if not task.cancelled():
            task.exception()  # retrieved: a timed-out request's error is not "never retrieved"

    def _with_engine(self, key: tuple[str, str], work: Callable[[Any], T]) -> T:
        engine = self._checkout(key)
        try:
            result = work(engine)
        except ForetabError:
            self._checkin(key, engine)
            raise
        except BaseException:
            # An unexpected failure may leave a connection mid-statement: drop that engine.
            self._discard(key, engine)
            raise
        self._checkin(key, engine)
        return result

    def _checkout(self, key: tuple[str, str]) -> Answering:
        self.refresh()
        with self._lock:
            idle = self._idle.setdefault(key, [])
            if idle:
                return idle.pop()
        try:
            return self._build(key)
        except StaleContextError:
            # Re-ingested since the last check: adopt the new generation and build over it.
            with self._lock:
                self._checked_at = float("-inf")
            self.refresh()
            return self._build(key)

    def _build(self, key: tuple[str, str]) -> Answering:
        # Built outside the lock: opening a store takes a while and must not block others.
        name, mode = key
        warm = self._warm
        if name == "rules":
            engine: Answering = self._factory(mode, warm)  # type: ignore[arg-type]
        else:
            assert self._agents is not None
            engine = self._agents[1](name, mode, warm.context)  # type: ignore[arg-type]
        with self._lock:
            # Built while a new ingest was adopted: it may read the old one, so it serves
            # this request only.
            (self._all if self._warm is warm else self._retired).append(engine)
        return engine

    def _checkin(self, key: tuple[str, str], engine: Answering) -> None:
        with self._lock:
            stale = _among(engine, self._retired) or not _among(engine, self._all)
            if stale:
                self._retired = [e for e in self._retired if e is not engine]
            else:
                self._idle.setdefault(key, []).append(engine)
        if stale:
            engine.close()

    def _discard(self, key: tuple[str, str], engine: Answering) -> None:
        if engine is self._warm:  # its indexes are shared by every other engine: keep it
            self._checkin(key, engine)
            return
        with self._lock:
            self._all = [e for e in self._all if e is not engine]
            self._retired = [e for e in self._retired if e is not engine]
        engine.close()

    def close(self) -> None:
        """Close every engine (at shutdown, when no request is running)."""
        with self._lock:
            engines = self._all + self._retired
            self._all, self._retired, self._idle = [], [], {}
        for engine in engines:
            engine.close()


def _public_name(location: Any) -> str:
    from pathlib import Path
    from urllib.parse import urlsplit

    if location.backend == "duckdb":
        return Path(location.history).name
    return urlsplit(location.history).path.lstrip("/") or "postgresql"


def _among(engine: Answering, engines: list[Answering]) -> bool:
    """``engine in engines`` by identity (engines do not define equality)."""
    return any(e is engine for e in engines)
