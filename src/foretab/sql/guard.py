"""The one guarded query executor every part of foretab uses to read the history store.

A statement (SQL text or a sqlglot AST with ``?`` placeholders) is parsed, checked by the
rules in ``foretab.sql.rules``, given a row cap, regenerated for the backend's dialect
without comments (what runs is exactly what was checked) and run on a read-only
connection with a time limit::

    with GuardedExecutor("corpus.duckdb") as guard:
        result = guard.execute("SELECT * FROM foretab_catalog WHERE year = ?", [2021])
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from sqlglot import exp

from foretab.errors import GuardError, QueryError, StoreError
from foretab.sql.connect import (
    HistoryTarget,
    LocationLike,
    open_duckdb_readonly,
    open_postgres_readonly,
    resolve_target,
)
from foretab.sql.rules import RULES, check_query, parse_single
from foretab.store.naming import CATALOG_TABLE

DEFAULT_MAX_ROWS = 10_000
DEFAULT_TIMEOUT_S = 5.0
# Stands in for placeholders while '%' is doubled for psycopg's parameter syntax.
_SENTINEL = "\x00foretab_param\x00"


@dataclass(frozen=True, slots=True)
class QueryResult:
    """Rows of one guarded query; ``truncated`` says more rows existed than ``max_rows``."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    truncated: bool
    elapsed_s: float
    sql: str = ""


class GuardedExecutor:
    """Runs single read-only SELECTs over the history store's catalog tables.

    ``location`` is a ``--db`` string (DuckDB path or ``postgresql://`` URL) or a
    ``StoreLocation``; only its history store is opened. ``allowed_tables`` defaults to
    every table listed in ``foretab_catalog`` (plus the catalog itself).
    """

    def __init__(
        self,
        location: str | LocationLike,
        allowed_tables: Collection[str] | None = None,
        *,
        max_rows: int = DEFAULT_MAX_ROWS,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        if max_rows < 1:
            raise QueryError(f"max_rows must be at least 1, got {max_rows}")
        if timeout_s <= 0:
            raise QueryError(f"timeout_s must be positive, got {timeout_s}")
        self.target: HistoryTarget = resolve_target(location)
        self.max_rows = max_rows
        self.timeout_s = timeout_s
        self.role = ""
        if self.target.backend == "duckdb":
            self._conn = open_duckdb_readonly(self.target.history)
        else:
            self._conn, self.role = open_postgres_readonly(self.target.history, timeout_s=timeout_s)
        if allowed_tables is None:
            allowed_tables = self._catalog_tables()
        self.allowed_tables = frozenset(t.lower() for t in allowed_tables) | {CATALOG_TABLE}

    # -- public API -------------------------------------------------------------------

    @property
    def dialect(self) -> str:
        """Sqlglot dialect of the backend (``duckdb`` or ``postgres``)."""
        return self.target.dialect

    def prepare(self, sql: str | exp.Expression) -> str:
        """Check ``sql`` and return the capped statement that ``execute`` would run."""
        return self._render(self._checked(sql))[0]

    def execute(
        self, sql: str | exp.Expression, params: Sequence[Any] | None = None
    ) -> QueryResult:
        """Run one guarded query; raises ``GuardError`` (refused) or ``QueryError`` (failed)."""
        query = self._checked(sql)
        n_placeholders = _count_placeholders(query)
        values = tuple(params or ())
        if n_placeholders != len(values):
            raise QueryError(
                f"the query has {n_placeholders} placeholder(s) but {len(values)} parameter(s) "
                "were given; pass one value per '?'"
            )
        text, driver_sql = self._render(query, with_params=bool(values))
        started = time.perf_counter()
        if self.target.backend == "duckdb":
            columns, rows = self._run_duckdb(driver_sql, values)
        else:
            columns, rows = self._run_postgres(driver_sql, values)
        elapsed = time.perf_counter() - started
        truncated = len(rows) > self.max_rows
        return QueryResult(
            columns=columns,
            rows=tuple(rows[: self.max_rows]),
            truncated=truncated,
            elapsed_s=elapsed,
            sql=text,
        )

    def close(self) -> None:
        """Close the connection (idempotent)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def __enter__(self) -> GuardedExecutor:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- internals --------------------------------------------------------------------

    def _catalog_tables(self) -> list[str]:
        sql = f"SELECT table_name FROM {CATALOG_TABLE}"
        try:
            if self.target.backend == "duckdb":
                rows = self._conn.execute(sql).fetchall()
            else:
                rows = self._conn.execute(sql).fetchall()
                self._conn.rollback()
        except Exception as error:
            self.close()
            raise StoreError(
                f"{self.target.history!r} has no readable {CATALOG_TABLE} table ({error}); "
                "is it a foretab store? Build one with `foretab ingest PATH --db DB`"
            ) from None
        return [str(row[0]) for row in rows]

    def _checked(self, sql: str | exp.Expression) -> exp.Query:
        if self._conn is None:
            raise QueryError("the executor is closed; open a new GuardedExecutor")
        if isinstance(sql, str):
            statement = parse_single(sql, self.dialect)
        elif isinstance(sql, exp.Expression):
            statement = sql.copy()
        else:
            raise GuardError("parse-error", f"expected SQL text or a sqlglot AST, got {type(sql)}")
        try:
            query = check_query(statement, self.allowed_tables)
            # Generating once here surfaces generator failures as refusals, not crashes.
            query.sql(dialect=self.dialect)
        except RecursionError:
            raise GuardError(
                "parse-error", "the statement is nested too deeply to check; simplify it"
            ) from None
        for node in query.find_all(exp.Placeholder):
            if node.this not in (None, ""):
                raise QueryError(
                    f"named or numbered placeholder {node.sql()} is not supported; use '?'"
                )
        return _cap_rows(query, self.max_rows + 1)

    def _render(self, query: exp.Query, *, with_params: bool = False) -> tuple[str, str]:
        """``(display SQL, SQL for the driver)`` in the backend dialect, comments dropped."""
        text = query.sql(dialect=self.dialect, comments=False)
        if self.target.backend == "duckdb" or not with_params:
            return text, text
        # psycopg reads '%s' as a parameter and '%%' as a literal percent sign.
        marked = query.transform(
            lambda n: exp.Var(this=_SENTINEL) if isinstance(n, exp.Placeholder) else n
        )
        raw = marked.sql(dialect=self.dialect, comments=False)
        return text, raw.replace("%", "%%").replace(_SENTINEL, "%s")

    def _timeout_error(self) -> QueryError:
        return QueryError(
            f"the query timed out after {self.timeout_s:g} s and was interrupted; "
            "narrow it (fewer tables, a WHERE clause) or raise the limit with --timeout "
            "(GuardedExecutor(timeout_s=...))"
        )

    def _run_duckdb(self, sql: str, params: tuple[Any, ...]) -> tuple[tuple[str, ...], list]:
        import duckdb

        conn = self._conn
        fired = threading.Event()

        def interrupt() -> None:
            fired.set()
            conn.interrupt()

        timer = threading.Timer(self.timeout_s, interrupt)
        timer.daemon = True
        timer.start()
        try:
            cursor = conn.execute(sql, list(params)) if params else conn.execute(sql)
            rows = cursor.fetchmany(self.max_rows + 1)
            columns = tuple(d[0] for d in cursor.description or ())
        except duckdb.Error as error:
            if fired.is_set() or isinstance(error, duckdb.InterruptException):
                raise self._timeout_error() from None
            raise QueryError(_first_line(error, "the query failed")) from None
        finally:
            timer.cancel()
        if fired.is_set():
            raise self._timeout_error()
        return columns, rows

    def _run_postgres(self, sql: str, params: tuple[Any, ...]) -> tuple[tuple[str, ...], list]:
        import psycopg

        conn = self._conn
        fired = threading.Event()

        def cancel() -> None:
            # Backstop to the server-side statement_timeout (e.g. a slow fetch).
            fired.set()
            conn.cancel_safe() if hasattr(conn, "cancel_safe") else conn.cancel()

        timer = threading.Timer(self.timeout_s + 1.0, cancel)
        timer.daemon = True
        timer.start()
        try:
            with conn.cursor() as cursor:
                cursor.execute(sql, params if params else None)
                rows = cursor.fetchmany(self.max_rows + 1)
                columns = tuple(d.name for d in cursor.description or ())
        except psycopg.errors.QueryCanceled:
            raise self._timeout_error() from None
        except psycopg.Error as error:
            if fired.is_set():
                raise self._timeout_error() from None
            raise QueryError(_first_line(error, "the query failed")) from None
        finally:
            timer.cancel()
            # Never commit: end the read-only transaction whatever happened.
            with contextlib.suppress(psycopg.Error):
                conn.rollback()
        return columns, rows


def _first_line(error: BaseException, default: str) -> str:
    text = str(error).strip()
    return f"{default}: {text.splitlines()[0]}" if text else default


def _count_placeholders(query: exp.Expression) -> int:
    return sum(1 for _ in query.find_all(exp.Placeholder))


def _cap_rows(query: exp.Query, cap: int) -> exp.Query:
    """Make the outermost query return at most ``cap`` rows without changing its meaning."""
    limit = query.args.get("limit")
    if limit is None and not query.args.get("offset"):
        query.set("limit", exp.Limit(expression=exp.Literal.number(cap)))
        return query
    if isinstance(limit, exp.Limit):
        value = limit.expression
        if isinstance(value, exp.Literal) and not value.is_string and value.this.isdigit():
            if int(value.this) > cap:
                limit.set("expression", exp.Literal.number(cap))
            return query
    # Any other LIMIT/FETCH/OFFSET shape: wrap, so the original clauses apply first.
    wrapped = exp.select("*").from_(query.subquery("foretab_result"))
    return wrapped.limit(cap)


def run_query(
    db: str | LocationLike,
    sql: str | exp.Expression,
    params: Sequence[Any] | None = None,
    *,
    max_rows: int = DEFAULT_MAX_ROWS,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> QueryResult:
    """Open a guarded executor on ``db``, run one query and close it."""
    with GuardedExecutor(db, max_rows=max_rows, timeout_s=timeout_s) as guard:
        return guard.execute(sql, params)


__all__ = [
    "DEFAULT_MAX_ROWS",
    "DEFAULT_TIMEOUT_S",
    "RULES",
    "GuardError",
    "GuardedExecutor",
    "QueryError",
    "QueryResult",
    "run_query",
]
