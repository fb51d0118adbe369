"""Read-only connections to the history store, locked down by the database itself.

DuckDB: the history file only, ``read_only=True``, external access (files, network,
extensions, replacement scans) off, no spilling to disk, configuration locked.
PostgreSQL: the history database only, as the SELECT-only ``foretab_reader`` role when
it exists, every transaction read-only, ``statement_timeout`` set server-side.
The future store is never opened here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit, urlunsplit

from foretab.errors import StoreError

READER_ROLE = "foretab_reader"
READER_PASSWORD_ENV = "FORETAB_PG_READER_PASSWORD"
Backend = Literal["duckdb", "postgresql"]


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
    """Where the history store is: a DuckDB file path or a PostgreSQL URL."""

    backend: Backend
    history: str

    @property
    def dialect(self) -> str:
        """The sqlglot dialect name for this backend."""
        return "duckdb" if self.backend == "duckdb" else "postgres"


def resolve_target(location: str | LocationLike) -> HistoryTarget:
    """``--db`` string, a ``StoreLocation`` or a store with ``.location`` -> the history store."""
    inner = getattr(location, "location", None)
    if inner is not None and not isinstance(location, str):
        location = inner
    if isinstance(location, str):
        if location.startswith(("postgresql://", "postgres://")):
            return HistoryTarget("postgresql", location)
        return HistoryTarget("duckdb", location)
    backend = location.backend
    if backend not in ("duckdb", "postgresql"):
        raise StoreError(f"unknown store backend {backend!r}; use duckdb or postgresql")
    return HistoryTarget(backend, location.history)  # type: ignore[arg-type]


def open_duckdb_readonly(path: str, *, memory_limit: str = "1GB") -> Any:
    """Open the history DuckDB file read-only with external access off."""
    import duckdb

    if not Path(path).is_file():
        raise StoreError(
            f"DuckDB store {path!r} not found; create it with `foretab ingest PATH --db {path}`"
        )
    config = {
        "enable_external_access": False,
        "autoload_known_extensions": False,
        "autoinstall_known_extensions": False,
        "allow_community_extensions": False,
        # No temp files: a runaway query fails on memory instead of writing to disk.
        "temp_directory": "",
        "memory_limit": memory_limit,
        "threads": max(1, min(4, os.cpu_count() or 1)),
        "lock_configuration": True,
    }
    try:
        return duckdb.connect(path, read_only=True, config=config)
    except duckdb.Error as error:
        raise StoreError(f"cannot open DuckDB store {path!r} read-only: {error}") from None


def _with_user(url: str, user: str, password: str | None) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = user if password is None else f"{user}:{password}"
    netloc += f"@{host}"
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _pg_options(timeout_s: float) -> str:
    ms = max(1, int(timeout_s * 1000))
    return (
        "-c default_transaction_read_only=on "
        f"-c statement_timeout={ms} "
        f"-c idle_in_transaction_session_timeout={max(ms * 4, 60_000)} "
        "-c search_path=public"
    )


def _reader_ready(url: str) -> bool:
    """Whether ``foretab_reader`` exists and was granted this store's catalog."""
    import psycopg

    with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
        row = conn.execute(
            "SELECT CASE WHEN to_regclass('public.foretab_catalog') IS NULL THEN false "
            "ELSE has_table_privilege(rolname, 'public.foretab_catalog', 'SELECT') END "
            "FROM pg_roles WHERE rolname = %s",
            (READER_ROLE,),
        ).fetchone()
    return bool(row and row[0])


def open_postgres_readonly(url: str, *, timeout_s: float) -> tuple[Any, str]:
    """Connect to the history database read-only; returns ``(connection, role)``.

    Prefers logging in as ``foretab_reader`` (password from ``$FORETAB_PG_READER_PASSWORD``
    when the server wants one); falls back to the URL's user, still in read-only
    transactions with a statement timeout.
    """
    import psycopg

    options = _pg_options(timeout_s)
    try:
        if _reader_ready(url):
            reader_url = _with_user(url, READER_ROLE, os.environ.get(READER_PASSWORD_ENV))
            try:
                conn = psycopg.connect(reader_url, options=options, connect_timeout=10)
            except psycopg.OperationalError:
                conn = None
            if conn is not None:
                conn.read_only = True
                return conn, READER_ROLE
        conn = psycopg.connect(url, options=options, connect_timeout=10)
    except psycopg.Error as error:
        raise StoreError(
            f"cannot connect to PostgreSQL store {_redact(url)}: {str(error).strip()}; "
            "check the --db URL and that the server is running"
        ) from None
    conn.read_only = True
    return conn, str(urlsplit(url).username or "")


def _redact(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    return _with_user(url, parts.username or "", "***")


def ensure_reader_role(
    target: Any, dbname: str | None = None, *, password: str | None = None
) -> None:
    """Create/refresh the SELECT-only ``foretab_reader`` role for a history database.

    ``target`` is either the history store's ``postgresql://`` URL (an admin user) or an
    open admin psycopg connection to the history database ``dbname``; call it after the
    tables are built. Grants CONNECT on the history database, USAGE on ``public`` and
    SELECT on ``foretab_catalog`` and every table it lists, nothing else; revokes CONNECT
    on ``{dbname}_future`` from PUBLIC and the reader so the future store stays
    invisible. Idempotent.
    """
    if isinstance(target, str):
        import psycopg

        name = dbname or urlsplit(target).path.lstrip("/")
        with psycopg.connect(target, autocommit=True) as conn:
            _grant(conn, name, password)
        return
    if dbname is None:
        raise StoreError("ensure_reader_role(conn, dbname): pass the history database name")
    _grant(target, dbname, password)


def _grant(conn: Any, dbname: str, password: str | None) -> None:
    from psycopg import sql

    role = sql.Identifier(READER_ROLE)
    # Roles are cluster-wide and two ingests may race to create it: tolerate "exists".
    conn.execute(
        "DO $$ BEGIN "
        f"CREATE ROLE {READER_ROLE} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT "
        "NOREPLICATION; "
        "EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$"
    )
    if password is not None:
        conn.execute(sql.SQL("ALTER ROLE {} PASSWORD {}").format(role, sql.Literal(password)))
    conn.execute(sql.SQL("ALTER ROLE {} SET default_transaction_read_only = on").format(role))
    conn.execute(sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(sql.Identifier(dbname), role))
    conn.execute(sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(role))
    conn.execute(sql.SQL("REVOKE CREATE ON SCHEMA public FROM PUBLIC"))
    conn.execute(sql.SQL("REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {}").format(role))
    names = [row[0] for row in conn.execute("SELECT table_name FROM foretab_catalog").fetchall()]
    for name in ["foretab_catalog", *names]:
        conn.execute(sql.SQL("GRANT SELECT ON TABLE {} TO {}").format(sql.Identifier(name), role))
    future = f"{dbname}_future"
    has_future = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (future,)).fetchone()
    if has_future is not None:
        conn.execute(
            sql.SQL("REVOKE CONNECT ON DATABASE {} FROM PUBLIC, {}").format(
                sql.Identifier(future), role
            )
        )


__all__ = [
    "READER_ROLE",
    "HistoryTarget",
    "LocationLike",
    "ensure_reader_role",
    "open_duckdb_readonly",
    "open_postgres_readonly",
    "resolve_target",
]
