"""Engines for concurrent requests, one checked out per request.

No DuckDB connection or cursor is ever used by two threads at once.

At most ``size`` requests run at a time (an anyio capacity limiter); an idle engine is
reused, a new one is built only when every existing one is busy. Engines after the first
share its planner (the entity index) and retriever (the BM25 caption index): both are
built once and only read afterwards. Each engine has its own store and guard connections
and its own future source.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread

from foretab.core.catalog import CatalogEntry, ProjectEntry
from foretab.engine import Engine
from foretab.errors import ForetabError
from foretab.future import FutureMode
from foretab.months import Month

T = TypeVar("T")

#: Builds an engine for a future mode; ``warm`` is the first engine, whose indexes to share.
EngineFactory = Callable[[FutureMode, Engine | None], Engine]


def engine_factory(db: str, model: str | None = None) -> EngineFactory:
    """The default factory: ``Engine(db, future=mode)``, sharing the warm engine's indexes."""

    def build(mode: FutureMode, warm: Engine | None) -> Engine:
        if warm is None:
            return Engine(db, future=mode, model=model)
        return Engine(db, future=mode, model=model, planner=warm.planner, retriever=warm.retriever)

    return build


class EnginePool:
    """A bounded set of engines over one store, checked out one per request."""

    def __init__(self, factory: EngineFactory, *, size: int = 4, default: FutureMode) -> None:
        if size < 1:
            raise ForetabError(f"the engine pool needs at least 1 engine, got {size}")
        self.size = size
        self.default: FutureMode = default
        self._factory = factory
        self._lock = threading.Lock()
        self._idle: dict[str, list[Engine]] = {}
        self._all: list[Engine] = []
        self._limiter = anyio.CapacityLimiter(size)
        # Built now: a missing or foreign store fails at start-up, not on the first request.
        self._warm = factory(default, None)
        self._all.append(self._warm)
        self._idle[default] = [self._warm]
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
        """Run ``work`` on an engine of ``mode`` in a worker thread; at most ``size`` at once."""
        return await anyio.to_thread.run_sync(
            self._with_engine, mode or self.default, work, limiter=self._limiter
        )

    def _with_engine(self, mode: FutureMode, work: Callable[[Engine], T]) -> T:
        engine = self._checkout(mode)
        try:
            result = work(engine)
        except ForetabError:
            self._checkin(mode, engine)
            raise
        except BaseException:
            # An unexpected failure may leave a connection mid-statement: drop that engine.
            self._discard(mode, engine)
            raise
        self._checkin(mode, engine)
        return result

    def _checkout(self, mode: FutureMode) -> Engine:
        with self._lock:
            idle = self._idle.setdefault(mode, [])
            if idle:
                return idle.pop()
        # Built outside the lock: opening a store takes a while and must not block others.
        engine = self._factory(mode, self._warm)
        with self._lock:
            self._all.append(engine)
        return engine

    def _checkin(self, mode: FutureMode, engine: Engine) -> None:
        with self._lock:
            self._idle.setdefault(mode, []).append(engine)

    def _discard(self, mode: FutureMode, engine: Engine) -> None:
        if engine is self._warm:  # its indexes are shared by every other engine: keep it
            self._checkin(mode, engine)
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
