"""Engines for concurrent requests, one checked out per request.

No DuckDB connection or cursor is ever used by two threads at once.

At most ``size`` requests run at a time (an anyio capacity limiter); an idle engine is
reused, a new one is built only when every existing one is busy (so at most ``size`` per
kind: engine name and future mode). Engines after the first
share its planner (the entity index) and retriever (the BM25 caption index): both are
built once and only read afterwards. Each engine has its own store and guard connections
and its own future source. An LLM engine (``timefore``, ``vanilla``, ``hybrid``), when the
server offers one, is pooled the same way; the LLM provider behind it is thread-safe and
shared.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import anyio
import anyio.to_thread

from foretab.core.answer import Answer
from foretab.core.catalog import CatalogEntry, ProjectEntry
from foretab.engine import Engine
from foretab.errors import ForetabError
from foretab.future import FutureMode
from foretab.months import Month
from foretab.timefore.errors import EngineChoiceError

T = TypeVar("T")

#: Builds a rules engine for a future mode; ``warm`` is the first one, whose indexes to share.
EngineFactory = Callable[[FutureMode, Engine | None], Engine]


class Answering(Protocol):
    """What a request needs of an engine (``Engine`` or ``foretab.engines.HybridEngine``)."""

    def ask(self, question: str) -> Answer: ...

    def close(self) -> None: ...


#: Builds the LLM engine named for a future mode (``foretab.engines.build_engine``).
AgentFactory = Callable[[str, FutureMode], Answering]


def agent_factory(db: str, llm: Any, model: str | None = None) -> AgentFactory:
    """LLM engines over ``db`` with the (thread-safe) provider ``llm``."""

    def build(engine: str, mode: FutureMode) -> Answering:
        from foretab.engines import build_engine

        return build_engine(db, engine, llm=llm, future=mode, model=model)

    return build


def engine_factory(db: str, model: str | None = None) -> EngineFactory:
    """The default factory: ``Engine(db, future=mode)``, sharing the warm engine's indexes."""

    def build(mode: FutureMode, warm: Engine | None) -> Engine:
        if warm is None:
            return Engine(db, future=mode, model=model)
        return Engine(db, future=mode, model=model, planner=warm.planner, retriever=warm.retriever)

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
    ) -> None:
        if size < 1:
            raise ForetabError(f"the engine pool needs at least 1 engine, got {size}")
        self.size = size
        self.default: FutureMode = default
        self._factory = factory
        self._agents = agents
        #: Engines a request may ask for: always the rules, plus the LLM engine if configured.
        self.engine_names: tuple[str, ...] = ("rules",) + ((agents[0],) if agents else ())
        self._lock = threading.Lock()
        self._idle: dict[tuple[str, str], list[Answering]] = {}
        self._all: list[Answering] = []
        self._limiter = anyio.CapacityLimiter(size)
        # Built now: a missing or foreign store fails at start-up, not on the first request.
        self._warm = factory(default, None)
        self._all.append(self._warm)
        self._idle[("rules", default)] = [self._warm]
        # Catalog and projects are read once at open and cached: shared read-only.
        self.catalog: tuple[CatalogEntry, ...] = tuple(self._warm.store.catalog())
        self.projects: tuple[ProjectEntry, ...] = tuple(self._warm.store.projects())
        self.reference: Month = self._warm.reference
        self.store_name = self._warm.store.location.describe()

    def examples(
        self, pick: Callable[[tuple[ProjectEntry, ...], Month, Callable[[str], object]], list[str]]
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
        return await anyio.to_thread.run_sync(self._with_engine, key, work, limiter=self._limiter)

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
        if engine not in self.engine_names:
            offered = ", ".join(self.engine_names)
            raise EngineChoiceError(
                f"this server does not offer engine {engine!r} (it offers {offered}); the "
                "LLM engines are served by `foretab serve --engine timefore` (or vanilla, "
                "hybrid) with --llm-base-url and --llm-model",
                suggestions=tuple(self.engine_names),
            )
        key = (engine, mode or self.default)
        return await anyio.to_thread.run_sync(
            self._with_engine, key, lambda e: then(e.ask(question)), limiter=self._limiter
        )

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
        with self._lock:
            idle = self._idle.setdefault(key, [])
            if idle:
                return idle.pop()
        # Built outside the lock: opening a store takes a while and must not block others.
        name, mode = key
        if name == "rules":
            engine: Answering = self._factory(mode, self._warm)  # type: ignore[arg-type]
        else:
            assert self._agents is not None
            engine = self._agents[1](name, mode)  # type: ignore[arg-type]
        with self._lock:
            self._all.append(engine)
        return engine

    def _checkin(self, key: tuple[str, str], engine: Answering) -> None:
        with self._lock:
            self._idle.setdefault(key, []).append(engine)

    def _discard(self, key: tuple[str, str], engine: Answering) -> None:
        if engine is self._warm:  # its indexes are shared by every other engine: keep it
            self._checkin(key, engine)
            return
        with self._lock:
            self._all.remove(engine)
        engine.close()

    def close(self) -> None:
        """Close every engine (at shutdown, when no request is running)."""
        with self._lock:
            engines, self._all, self._idle = self._all, [], {}
        for engine in engines:
            engine.close()
