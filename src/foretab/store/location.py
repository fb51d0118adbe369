"""Where a store lives: a DuckDB file pair or two PostgreSQL databases."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from foretab.errors import StoreError

Backend = Literal["duckdb", "postgresql"]
FUTURE_SUFFIX = "_future"


@dataclass(frozen=True, slots=True)
class StoreLocation:
    """The history store and its separate future store.

    DuckDB: ``corpus.duckdb`` holds history; the sibling ``corpus.future.duckdb`` holds the
    future. PostgreSQL: database ``NAME`` holds history, ``NAME_future`` the future — two
    databases, so a connection to one cannot name tables of the other.
    """

    backend: Backend
    history: str
    future: str

    @classmethod
    def parse(cls, db: str) -> StoreLocation:
        """Read a ``--db`` value: a file path or a ``postgresql://`` URL."""
        db = str(db).strip()
        if not db:
            raise StoreError("Empty --db; pass a DuckDB file path or a postgresql:// URL.")
        if db.startswith(("postgresql://", "postgres://")):
            parts = urlsplit(db)
            name = parts.path.lstrip("/")
            if not name:
                raise StoreError(
                    f"PostgreSQL URL {db!r} names no database; add one, e.g. "
                    "postgresql://user@localhost:5432/foretab."
                )
            future = urlunsplit(parts._replace(path="/" + name + FUTURE_SUFFIX))
            return cls("postgresql", db, future)
        if "://" in db:
            raise StoreError(
                f"Unsupported store URL {db!r}; use a DuckDB file path or postgresql://…"
            )
        path = Path(db)
        if path.suffix == ".duckdb":
            future = path.with_name(path.stem + ".future.duckdb")
        else:
            future = path.with_name(path.name + ".future")
        return cls("duckdb", str(path), str(future))

    @property
    def artifacts_dir(self) -> Path:
        """DuckDB only: the folder beside the store where fitted models are kept."""
        path = Path(self.history)
        stem = path.stem if path.suffix == ".duckdb" else path.name
        return path.with_name(stem + ".artifacts")

    def database_name(self, which: Literal["history", "future"]) -> str:
        """PostgreSQL only: the database name of one side."""
        return urlsplit(self.history if which == "history" else self.future).path.lstrip("/")

    def describe(self, which: Literal["history", "future"] = "history") -> str:
        """A printable name without credentials."""
        target = self.history if which == "history" else self.future
        if self.backend == "duckdb":
            return target
        parts = urlsplit(target)
        host = parts.hostname or "localhost"
        port = f":{parts.port}" if parts.port else ""
        return f"postgresql://{host}{port}{parts.path}"
