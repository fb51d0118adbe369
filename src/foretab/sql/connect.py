"""Which database the guard opens: the history store of a ``--db`` value or location.

The connection itself (read-only, locked down, the PostgreSQL reader role) belongs to the
backend (``foretab.backend``); the future store is never opened here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from foretab.backend import Backend, backend_for, get_backend


class LocationLike(Protocol):
    """Anything with the two fields of ``foretab.store.StoreLocation`` we need."""

    @property
    def backend(self) -> str:
        """``duckdb`` or ``postgresql``."""
        ...

    @property
    def history(self) -> str:
        """The history store: a DuckDB path or a ``postgresql://`` URL."""
        ...


@dataclass(frozen=True, slots=True)
class HistoryTarget:
    """The history store and the backend that opens it."""

    backend: Backend
    history: str
    generation: str | None = None  # the generation an open store reads (PostgreSQL pins it)

    @property
    def dialect(self) -> str:
        """The sqlglot dialect name for this backend."""
        return self.backend.dialect


def resolve_target(location: str | LocationLike) -> HistoryTarget:
    """``--db`` string, a ``StoreLocation`` or a store with ``.location`` -> the history store.

    An open store's guard reads the same generation as the store (``generation``), even
    when an ingest has switched the store to a newer one since it was opened (PostgreSQL
    keeps it one ingest longer; a replaced DuckDB file is refused).
    """
    inner = getattr(location, "location", None)
    generation = None
    if inner is not None and not isinstance(location, str):
        generation = getattr(location, "generation", None)
        location = inner
    if isinstance(location, str):
        return HistoryTarget(backend_for(location), location)
    return HistoryTarget(get_backend(location.backend), location.history, generation)


__all__ = ["HistoryTarget", "LocationLike", "resolve_target"]
