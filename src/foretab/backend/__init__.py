"""Database backends behind one interface (``Backend``), used by the guard and the stores.

    backend = backend_for("corpus.duckdb")          # or a postgresql:// URL
    conn = backend.connect("corpus.duckdb", purpose="trusted", timeout_s=None)
    rows = conn.fetch(exp.select("value").from_(table("foretab_meta"))
                      .where(column("key").eq(param())), ["reference_month"])

This package imports neither ``foretab.sql`` nor ``foretab.store``; both import it.
"""

from __future__ import annotations

from foretab.backend.base import (
    Backend,
    BackendName,
    Purpose,
    ReadConnection,
    Rows,
    column,
    count_params,
    param,
    quote,
    table,
)
from foretab.errors import StoreError

_PG_SCHEMES = ("postgresql://", "postgres://")


def get_backend(name: str) -> Backend:
    """The backend called ``name`` (``duckdb`` or ``postgresql``)."""
    if name == "duckdb":
        from foretab.backend.duck import DuckDBBackend

        return DuckDBBackend()
    if name == "postgresql":
        from foretab.backend.postgres import PostgresBackend

        return PostgresBackend()
    raise StoreError(f"unknown store backend {name!r}; use duckdb or postgresql")


def backend_name_for(target: str) -> BackendName:
    """``postgresql`` for a ``postgresql://`` URL, else ``duckdb`` (a file path)."""
    return "postgresql" if str(target).startswith(_PG_SCHEMES) else "duckdb"


def backend_for(target: str) -> Backend:
    """The backend of a ``--db`` value (DuckDB path or PostgreSQL URL)."""
    return get_backend(backend_name_for(target))


__all__ = [
    "Backend",
    "BackendName",
    "Purpose",
    "ReadConnection",
    "Rows",
    "backend_for",
    "backend_name_for",
    "column",
    "count_params",
    "get_backend",
    "param",
    "quote",
    "table",
]
