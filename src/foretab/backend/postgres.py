"""PostgreSQL: the paper's setup, one database per store side.

Each side's tables live in one schema per ingest, ``foretab_g_<generation>``; the history
database's ``public.foretab_current`` names the generation to read (the single switch
point an ingest commits, ``foretab.store.pg_swap``). Every connection is pinned to one
generation when it opens (its ``search_path``), so it reads one complete generation for
its whole life, in both databases. Stores written before generations had their tables in
``public`` and are read from there.

Parameters are PostgreSQL's own numbered ``$n``, bound server-side through psycopg's
``RawCursor``: no client-side ``%s`` parsing, so no text is ever rewritten. Every
statement runs in a read-only transaction that is rolled back afterwards. The guard
connects as the SELECT-only ``foretab_reader`` role when the store granted it, foretab's
own reads as the URL's user.

A long-running process (each worker of ``foretab serve``) calls ``use_connection_pool(n)``:
from then on foretab's own reads borrow their connections from a ``psycopg_pool`` pool per
database (at most ``n`` open, in this process) and hand them back at close, reset (``RESET
ALL``: the generation pin goes) and rolled back. The guard's connections are not pooled:
they live in the guard's worker processes, one per engine.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote as url_quote
from urllib.parse import urlsplit, urlunsplit

import sqlglot
from sqlglot import exp
from sqlglot.dialects.postgres import Postgres

from foretab.backend.base import BackendName, Purpose, RendersToText, Rows, collect, quote
from foretab.errors import QueryError, QueryTimeoutError, StoreError

log = logging.getLogger("foretab.backend")
READER_ROLE = "foretab_reader"
READER_PASSWORD_ENV = "FORETAB_PG_READER_PASSWORD"
CONNECT_TIMEOUT_S = 10
# A failed ROLLBACK is retried once: the only thing that fails one is a spent cancel.
_ROLLBACK_ATTEMPTS = 2
# The history database's switch: one row naming the current (and the previous) generation.
POINTER_TABLE = "foretab_current"
SCHEMA_PREFIX = "foretab_g_"
SCHEMA_LIKE = SCHEMA_PREFIX.replace("_", "\\_") + "%"  # for LIKE: "_" is a wildcard
_GENERATION = re.compile(r"[0-9a-f]{32}")
# What an unqualified name can reach: the search path (the generation's schema), pg_catalog
# (always searched) and temporary schemas; public and information_schema's views are listed
# too, for good measure.
_RELATIONS_SQL = (
    "SELECT c.relname FROM pg_catalog.pg_class AS c JOIN pg_catalog.pg_namespace AS n "
    "ON n.oid = c.relnamespace WHERE n.nspname IN ('public', 'pg_catalog', "
    "'information_schema') OR n.nspname LIKE 'pg_temp%' "
    "OR n.nspname = ANY (current_schemas(true))"
)


_POOLS: dict[tuple[str, str], Any] = {}
_POOLS_LOCK = threading.Lock()
_POOL_MAX: int | None = None


def use_connection_pool(max_size: int) -> None:
    """Pool foretab's own PostgreSQL connections in this process.

    At most ``max_size`` are open per database (a store is two: history and future).
    """
    global _POOL_MAX
    if max_size < 1:
        raise StoreError(f"a connection pool needs at least 1 connection, got {max_size}")
    _POOL_MAX = max_size


def close_connection_pools() -> None:
    """Close every pool of this process (and stop pooling)."""
    global _POOL_MAX
    with _POOLS_LOCK:
        pools = list(_POOLS.values())
        _POOLS.clear()
        _POOL_MAX = None
    for pool in pools:
        pool.close()


def pool_sizes() -> dict[str, int]:
    """Open connections per pooled database (its name, no host or user): for health, tests."""
    with _POOLS_LOCK:
        return {
            urlsplit(target).path.lstrip("/"): pool.get_stats()["pool_size"]
            for (target, _), pool in _POOLS.items()
        }


def _pool_for(target: str, options: str) -> Any:
    import psycopg
    from psycopg_pool import ConnectionPool

    assert _POOL_MAX is not None
    with _POOLS_LOCK:
        pool = _POOLS.get((target, options))
        if pool is None:

            def configure(conn: Any) -> None:
                conn.server_cursor_factory = psycopg.RawServerCursor
                conn.read_only = True

            def reset(conn: Any) -> None:
                psycopg.Cursor(conn).execute("RESET ALL")  # the generation's search_path
                conn.rollback()

            pool = ConnectionPool(
                target,
                min_size=1,
                max_size=_POOL_MAX,
                kwargs={
                    "options": options,
                    "connect_timeout": CONNECT_TIMEOUT_S,
                    "cursor_factory": psycopg.RawCursor,
                },
                configure=configure,
                reset=reset,
                timeout=CONNECT_TIMEOUT_S,
                name=f"foretab {redact(target)}",
                open=True,
            )
            _POOLS[(target, options)] = pool
        return pool


def generation_schema(generation: str) -> str:
    """``foretab_g_<generation>``: the schema one ingest's tables live in."""
    if not _GENERATION.fullmatch(generation):
        raise StoreError(
            f"invalid store generation {generation!r:.80}; the store was not written by "
            "foretab. Rebuild it with `foretab ingest PATH --db URL`"
        )
    return SCHEMA_PREFIX + generation


def current_generation(conn: Any) -> str | None:
    """The generation the history database's pointer names, or None.

    None: a store of the older layout, or no store. ``conn`` is an open psycopg connection
    to that database.
    """
    has = _query(conn, "SELECT to_regclass(%s)", [f"public.{POINTER_TABLE}"]).fetchone()
    if not has or has[0] is None:
        return None
    row = _query(conn, f"SELECT generation FROM public.{POINTER_TABLE}").fetchone()
    if row is None or not isinstance(row[0], str):
        return None
    generation_schema(row[0])  # validated: it becomes a schema name
    return row[0]


def store_schema(conn: Any, generation: str | None = None) -> str:
    """The schema holding ``generation`` (default: the current one) in ``conn``'s database.

    ``public`` for a store of the older layout, or a database that is no store at all (the
    caller finds no foretab tables there). Raises ``StoreError`` when the generation asked
    for is not in this database (e.g. an ingest that left no future months).
    """
    if generation is None:
        generation = current_generation(conn) or _any_generation(conn)
        if generation is None:
            return "public"
    schema = generation_schema(generation)
    found = _query(conn, "SELECT 1 FROM pg_namespace WHERE nspname = %s", [schema]).fetchone()
    if found:
        return schema
    legacy = _query(
        conn,
        "SELECT has_table_privilege(to_regclass('public.foretab_meta'), 'SELECT') "
        "WHERE to_regclass('public.foretab_meta') IS NOT NULL",
    ).fetchone()
    if legacy is not None:
        if not legacy[0]:
            return "public"  # the reader role may not read the metadata; its grants decide
        row = _query(
            conn,
            "SELECT 1 FROM public.foretab_meta WHERE key = 'generation' AND value = %s",
            [generation],
        ).fetchone()
        if row:
            return "public"
    raise StoreError(f"the database holds no tables of store generation {generation}")


def _any_generation(conn: Any) -> str | None:
    """One generation of a database without a pointer, or None.

    A future database opened as if it were a history store still says which side it holds
    through any of its generations' metadata.
    """
    if _query(conn, "SELECT to_regclass('public.foretab_meta')").fetchone()[0] is not None:
        return None  # the older layout: public holds the store
    row = _query(
        conn,
        "SELECT substr(nspname, %s) FROM pg_namespace WHERE nspname LIKE %s ORDER BY 1 LIMIT 1",
        [len(SCHEMA_PREFIX) + 1, SCHEMA_LIKE],
    ).fetchone()
    return row[0] if row and _GENERATION.fullmatch(row[0]) else None


def _pin(driver: Any, generation: str | None) -> str:
    """Fix ``driver``'s search path to one generation's schema for the whole session."""
    import psycopg

    try:
        schema = store_schema(driver, generation)
        # Session level and committed: each later statement's rollback keeps it.
        _query(driver, "SELECT set_config('search_path', %s, false)", [_ident(schema)])
        driver.commit()
    except psycopg.Error as error:
        driver.close()
        raise StoreError(
            f"cannot find the current store generation ({_first_line(error, 'no detail')}); "
            "re-run `foretab ingest PATH --db URL` to rebuild the store and its grants"
        ) from None
    except BaseException:
        driver.close()
        raise
    return schema


def _query(conn: Any, sql: str, params: Sequence[object] = ()) -> Any:
    """``sql`` with ``%s`` parameters, whatever cursor class ``conn`` makes by default."""
    import psycopg

    return psycopg.Cursor(conn).execute(sql, params)


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


# Stands for one placeholder until the text is complete. sqlglot generates a query's body
# before the WITH clause it prepends, so numbering while generating would give a CTE's
# placeholders higher numbers than the body's although they come first in the text (and
# the parameters are in text order). A NUL cannot occur in PostgreSQL text, so the marker
# never collides with a literal.
_MARK = "\x00?\x00"


class _NumberedGenerator(Postgres.Generator):  # type: ignore[misc,name-defined]
    """Postgres SQL with ``$1, $2, …`` numbered in the order they appear in the text."""

    def placeholder_sql(self, expression: exp.Placeholder) -> str:
        if expression.this not in (None, ""):
            raise QueryError(f"placeholder {expression.sql()} is not supported; use '?'")
        return _MARK


def _numbered(text: str) -> str:
    parts = text.split(_MARK)
    return parts[0] + "".join(f"${i}{part}" for i, part in enumerate(parts[1:], start=1))


class PostgresBackend:
    """PostgreSQL databases reached by ``postgresql://`` URLs."""

    name: BackendName = "postgresql"
    dialect = "postgres"
    renders_dialect_text = False  # numbered ``$1`` markers

    def render(self, query: exp.Expression) -> str:
        return _numbered(_NumberedGenerator(dialect=Postgres(), comments=False).generate(query))

    def quote(self, identifier: str) -> str:
        return quote(identifier, self.dialect)

    def connect(
        self,
        target: str,
        *,
        purpose: Purpose,
        timeout_s: float | None = None,
        memory_bytes: int | None = None,
        generation: str | None = None,
    ) -> PostgresConnection:
        del memory_bytes  # the server's memory is the server's; results arrive capped
        import psycopg

        options = _options(timeout_s)
        if purpose == "guard":
            return self._connect_reader(target, options, generation)
        if _POOL_MAX is not None:
            return self._borrow(target, options, generation)
        try:
            driver = psycopg.connect(
                target,
                options=options,
                connect_timeout=CONNECT_TIMEOUT_S,
                cursor_factory=psycopg.RawCursor,
            )
            driver.server_cursor_factory = psycopg.RawServerCursor
        except psycopg.Error as error:
            raise StoreError(
                f"cannot connect to PostgreSQL store {redact(target)}: "
                f"{redact_text(str(error).strip(), target)}; "
                "check the --db URL and that the server is running"
            ) from None
        driver.read_only = True
        return PostgresConnection(self, driver, _pin(driver, generation))

    def _borrow(self, target: str, options: str, generation: str | None) -> PostgresConnection:
        """A connection of this process's pool for ``target`` (``use_connection_pool``)."""
        import psycopg
        from psycopg_pool import PoolTimeout

        pool = _pool_for(target, options)
        try:
            driver = pool.getconn()
        except PoolTimeout:
            raise StoreError(
                f"all {pool.max_size} connections of this process's pool to "
                f"{redact(target)} stayed in use for {CONNECT_TIMEOUT_S} s; serve with fewer "
                "--engines or a bigger --pg-pool"
            ) from None
        except psycopg.Error as error:
            raise StoreError(
                f"cannot connect to PostgreSQL store {redact(target)}: "
                f"{redact_text(str(error).strip(), target)}; "
                "check the --db URL and that the server is running"
            ) from None
        try:
            schema = _pin(driver, generation)  # closes the driver on failure: the pool drops it
        except BaseException:
            pool.putconn(driver)
            raise
        return PostgresConnection(self, driver, schema, release=pool.putconn)

    def _connect_reader(
        self, target: str, options: str, generation: str | None
    ) -> PostgresConnection:
        """The guard's connection: the SELECT-only reader role, verified, or nothing."""
        import psycopg

        try:
            ready = reader_ready(target, generation)
        except psycopg.Error as error:
            raise StoreError(
                f"cannot connect to PostgreSQL store {redact(target)}: "
                f"{redact_text(str(error).strip(), target)}; "
                "check the --db URL and that the server is running"
            ) from None
        if not ready:
            raise StoreError(
                f"{redact(target)} has no SELECT grants for the {READER_ROLE} role, so the SQL "
                "guard will not run there (it never falls back to the owner). If this is the "
                "_future database, pass the history database instead; otherwise re-run "
                "`foretab ingest PATH --db URL` as a role with CREATEROLE"
            )
        driver = _connect_as_reader(target, options)
        if driver is None:
            raise StoreError(
                f"cannot log in to {redact(target)} as {READER_ROLE}; if the server asks for a "
                f"password, set ${READER_PASSWORD_ENV} (the same value at `foretab ingest`)"
            )
        conn = PostgresConnection(self, driver, _pin(driver, generation))
        row = conn._row(
            "SELECT current_user, session_user, r.rolsuper, r.rolcreaterole, r.rolcreatedb "
            "FROM pg_catalog.pg_roles AS r WHERE r.rolname = current_user"
        )
        if row is None or row[0] != READER_ROLE or row[1] != READER_ROLE or any(row[2:]):
            conn.close()
            raise StoreError(
                f"the SQL guard's session on {redact(target)} does not run as the plain "
                f"{READER_ROLE} role (got {row!r:.80}); fix the role with `foretab ingest`"
            )
        return conn


class PostgresConnection(RendersToText):
    """A psycopg connection whose every statement is a rolled-back read-only transaction."""

    def __init__(
        self,
        backend: PostgresBackend,
        driver: Any,
        schema: str = "public",
        *,
        release: Any = None,
    ) -> None:
        self.backend = backend
        self.driver = driver
        self._release = release  # a pool's putconn; None: the connection is closed
        self.schema = schema  # the generation's schema every unqualified name resolves in
        self.role = str(self._scalar("SELECT current_user"))

    def _row(self, sql: str) -> tuple[Any, ...] | None:
        try:
            return self.driver.execute(sql).fetchone()
        finally:
            self.driver.rollback()

    def _scalar(self, sql: str) -> object:
        row = self._row(sql)
        return row[0] if row else None

    def fetch_text(
        self,
        sql: str,
        values: list[object],
        *,
        max_rows: int | None = None,
        max_bytes: int | None = None,
    ) -> Rows:
        """``fetch`` of a statement already rendered for the driver, one value per marker."""
        import psycopg

        conn = self.driver
        if conn is None:
            raise QueryError("the connection is closed; open the store again")
        try:
            if max_rows is None and max_bytes is None:
                # Always the extended protocol (a parameter list, even empty): one statement.
                with conn.cursor() as cursor:
                    cursor.execute(sql, values)
                    columns = tuple(d.name for d in cursor.description or ())
                    return Rows(columns, tuple(cursor.fetchall()))
            # Capped reads go through a server-side cursor: rows arrive in batches and stop
            # at the caps instead of the whole result landing in this process first.
            with conn.cursor(name="foretab_guard") as cursor:
                cursor.execute(sql, values)
                columns = tuple(d.name for d in cursor.description or ())
                rows, more, by_bytes = collect(cursor.fetchmany, max_rows, max_bytes)
            return Rows(columns, tuple(rows), more, by_bytes)
        except psycopg.errors.QueryCanceled:
            raise QueryTimeoutError("the query was cancelled at its time limit") from None
        except psycopg.Error as error:
            raise QueryError(_first_line(error, "the query failed")) from None
        except MemoryError:
            raise QueryError(
                "the query's result did not fit in memory and was stopped; narrow it"
            ) from None
        finally:
            self._end_transaction()

    def _end_transaction(self) -> None:
        """Never commit: roll the read-only transaction back, whatever happened.

        The guard worker's watchdog cancels a statement at its limit from another thread,
        just as the server's own ``statement_timeout`` ends it; the cancel can then land on
        this ROLLBACK and fail it, leaving the session in an aborted transaction that
        refuses every later statement. Such a cancel is spent once it has failed a command,
        so roll back again; a session that still will not end its transaction is closed
        rather than reused half-way.
        """
        import psycopg

        conn = self.driver
        for _ in range(_ROLLBACK_ATTEMPTS):
            with contextlib.suppress(psycopg.Error):
                conn.rollback()
            if conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
                return
        log.warning("a PostgreSQL session did not end its transaction; closing it")
        self.driver = None
        with contextlib.suppress(psycopg.Error):
            conn.close()

    def relation_names(self) -> frozenset[str]:
        query = sqlglot.parse_one(_RELATIONS_SQL, read="postgres")
        return frozenset(str(r[0]).lower() for r in self.fetch(query).rows)

    def interrupt(self) -> None:
        conn = self.driver
        if conn is not None:
            conn.cancel_safe()

    def close(self) -> None:
        conn, self.driver = self.driver, None
        if conn is None:
            return
        if self._release is not None:
            with contextlib.suppress(Exception):  # a pool closed at shutdown drops it
                self._release(conn)
                return
        conn.close()


def _options(timeout_s: float | None) -> str:
    options = "-c default_transaction_read_only=on -c search_path=public"
    if timeout_s is not None:
        ms = max(1, int(timeout_s * 1000))
        options += (
            f" -c statement_timeout={ms}"
            f" -c idle_in_transaction_session_timeout={max(ms * 4, 60_000)}"
        )
    return options


def _connect_as_reader(url: str, options: str) -> Any | None:
    """Log in as the reader role (keyword arguments override any user in the URL)."""
    import psycopg

    try:
        driver = psycopg.connect(
            url,
            user=READER_ROLE,
            password=os.environ.get(READER_PASSWORD_ENV) or None,
            options=options,
            connect_timeout=CONNECT_TIMEOUT_S,
            cursor_factory=psycopg.RawCursor,
        )
    except psycopg.OperationalError:
        return None
    driver.server_cursor_factory = psycopg.RawServerCursor
    driver.read_only = True
    return driver


def reader_ready(url: str, generation: str | None = None) -> bool:
    """Whether ``foretab_reader`` exists and was granted this store generation's catalog."""
    import psycopg

    with psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S) as conn:
        catalog = f"{_ident(store_schema(conn, generation))}.foretab_catalog"
        row = conn.execute(
            "SELECT CASE WHEN to_regclass(%s) IS NULL THEN false "
            "ELSE has_table_privilege(rolname, %s, 'SELECT') END "
            "FROM pg_roles WHERE rolname = %s",
            (catalog, catalog, READER_ROLE),
        ).fetchone()
    return bool(row and row[0])


def with_user(url: str, user: str, password: str | None) -> str:
    """``url`` with its user (and password) replaced, both percent-encoded."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = url_quote(user, safe="")
    if password is not None:
        netloc += ":" + url_quote(password, safe="")
    netloc += f"@{host}"
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def redact(url: str) -> str:
    """A URL fit to print: no password, no query string (it may carry one too)."""
    parts = urlsplit(url)
    host = parts.hostname or "localhost"
    port = f":{parts.port}" if parts.port else ""
    user = f"{parts.username}@" if parts.username else ""
    return f"{parts.scheme}://{user}{host}{port}{parts.path}"


def redact_text(text: str, url: str) -> str:
    """``text`` with the URL's password (and any reader password) blanked out."""
    secrets = [urlsplit(url).password, os.environ.get(READER_PASSWORD_ENV)]
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def check_can_grant_reader(url: str) -> None:
    """Refuse early when the ingesting role can neither create nor find the reader role."""
    import psycopg

    with psycopg.connect(url, dbname="postgres", autocommit=True) as conn:
        row = conn.execute(
            "SELECT (SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user),"
            " EXISTS (SELECT 1 FROM pg_roles WHERE rolname = %s)",
            (READER_ROLE,),
        ).fetchone()
    can_create, exists = bool(row and row[0]), bool(row and row[1])
    if not (can_create or exists):
        raise StoreError(
            f"the PostgreSQL role of {redact(url)} may not create roles, and the SELECT-only "
            f"{READER_ROLE} role the SQL guard logs in as does not exist; nothing was written. "
            f"Create it once as an administrator (CREATE ROLE {READER_ROLE} LOGIN), or ingest as "
            "a role with CREATEROLE, then re-run `foretab ingest`"
        )


def ensure_reader_role(
    target: Any,
    dbname: str | None = None,
    *,
    password: str | None = None,
    schema: str | None = None,
) -> None:
    """Create/refresh the SELECT-only ``foretab_reader`` role for a history database.

    ``target`` is either the history store's ``postgresql://`` URL (an admin user) or an
    open admin psycopg connection to the history database ``dbname``; call it after the
    tables are built. ``schema`` is the generation to grant (default: the current one).
    Grants CONNECT on the history database, USAGE on ``public`` (to read the generation
    pointer) and on the generation's schema, and SELECT on the pointer, ``foretab_catalog``
    and every price table it lists, nothing else; revokes CONNECT on ``{dbname}_future``
    from PUBLIC and the reader so the future store stays invisible. Idempotent.
    """
    if isinstance(target, str):
        import psycopg

        name = dbname or urlsplit(target).path.lstrip("/")
        with psycopg.connect(target, autocommit=True) as conn:
            _grant(conn, name, password, schema or store_schema(conn))
        return
    if dbname is None:
        raise StoreError("ensure_reader_role(conn, dbname): pass the history database name")
    _grant(target, dbname, password, schema or store_schema(target))


# The data-table names ingest writes (``foretab.store.naming.is_table_name``; this package
# does not import the store): ``<name>_<year>``, nothing foretab or PostgreSQL keeps.
_DATA_TABLE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*_\d{4}")
_RESERVED = ("foretab_", "pg_", "sqlite_", "duckdb_", "information_schema", "sys")


def _grant(conn: Any, dbname: str, password: str | None, schema: str) -> None:
    from psycopg import sql

    role = sql.Identifier(READER_ROLE)
    row = conn.execute(
        "SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user"
    ).fetchone()
    if row and row[0]:
        # Roles are cluster-wide and two ingests may race to create it: tolerate "exists".
        conn.execute(
            sql.SQL(
                "DO $$ BEGIN "
                "CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT "
                "NOREPLICATION; "
                "EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$"
            ).format(role)
        )
        if password is not None:
            conn.execute(sql.SQL("ALTER ROLE {} PASSWORD {}").format(role, sql.Literal(password)))
        conn.execute(sql.SQL("ALTER ROLE {} SET default_transaction_read_only = on").format(role))
    # Without CREATEROLE the role must exist already (check_can_grant_reader said so): the
    # owner of the tables can still grant on them.
    conn.execute(sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(sql.Identifier(dbname), role))
    conn.execute(sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(role))
    conn.execute(sql.SQL("REVOKE CREATE ON SCHEMA public FROM PUBLIC"))
    conn.execute(sql.SQL("REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {}").format(role))
    has_pointer = conn.execute("SELECT to_regclass(%s)", [f"public.{POINTER_TABLE}"]).fetchone()
    if has_pointer and has_pointer[0] is not None:
        conn.execute(
            sql.SQL("GRANT SELECT ON TABLE {} TO {}").format(
                sql.Identifier("public", POINTER_TABLE), role
            )
        )
    conn.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(sql.Identifier(schema), role))
    listed = conn.execute(
        sql.SQL("SELECT table_name FROM {}").format(sql.Identifier(schema, "foretab_catalog"))
    ).fetchall()
    # A crafted catalog must not make the grant reach tables foretab never wrote.
    names = [
        r[0]
        for r in listed
        if isinstance(r[0], str) and _DATA_TABLE.fullmatch(r[0]) and not r[0].startswith(_RESERVED)
    ]
    for name in ["foretab_catalog", *names]:
        conn.execute(
            sql.SQL("GRANT SELECT ON TABLE {} TO {}").format(sql.Identifier(schema, name), role)
        )
    future = f"{dbname}_future"
    has_future = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (future,)).fetchone()
    if has_future is not None:
        conn.execute(
            sql.SQL("REVOKE CONNECT ON DATABASE {} FROM PUBLIC, {}").format(
                sql.Identifier(future), role
            )
        )


def _first_line(error: BaseException, default: str) -> str:
    text = str(error).strip()
    return f"{default}: {text.splitlines()[0]}" if text else default
