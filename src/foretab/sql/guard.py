"""The one guarded query executor every part of foretab uses to read the history store.

A statement (SQL text or a sqlglot AST with ``?`` placeholders) is parsed, checked by the
rules in ``foretab.sql.rules``, given a row cap, regenerated for the backend's dialect
without comments (what runs is exactly what was checked) and run on a read-only
connection with a time limit::

    with GuardedExecutor("corpus.duckdb") as guard:
        result = guard.execute("SELECT * FROM foretab_catalog WHERE year = ?", [2021])
"""

from __future__ import annotations

import threading
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from sqlglot import exp

from foretab.backend import ReadConnection, column, count_params, table
from foretab.errors import GuardError, QueryError, QueryTimeoutError, StoreError
from foretab.sql.connect import HistoryTarget, LocationLike, resolve_target
from foretab.sql.rules import RULES, check_query, parse_single
from foretab.store.naming import CATALOG_TABLE, is_table_name

DEFAULT_MAX_ROWS = 10_000
DEFAULT_TIMEOUT_S = 5.0


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
        self._conn: ReadConnection | None = self.target.backend.connect(
            self.target.history, purpose="guard", timeout_s=timeout_s
        )
        self.role = self._conn.role
        if allowed_tables is None:
            allowed_tables = self._catalog_tables()
        self.allowed_tables = frozenset(t.lower() for t in allowed_tables) | {CATALOG_TABLE}
        self.reserved_names = self._conn.relation_names()

    # -- public API -------------------------------------------------------------------

    @property
    def dialect(self) -> str:
        """Sqlglot dialect of the backend (``duckdb`` or ``postgres``)."""
        return self.target.dialect

    def prepare(self, sql: str | exp.Expression) -> str:
        """Check ``sql`` and return the capped statement that ``execute`` would run."""
        return self._checked(sql).sql(dialect=self.dialect, comments=False)

    def execute(
        self, sql: str | exp.Expression, params: Sequence[Any] | None = None
    ) -> QueryResult:
        """Run one guarded query; raises ``GuardError`` (refused) or ``QueryError`` (failed)."""
        query = self._checked(sql)
        n_placeholders = count_params(query)
        values = tuple(params or ())
        if n_placeholders != len(values):
            raise QueryError(
                f"the query has {n_placeholders} placeholder(s) but {len(values)} parameter(s) "
                "were given; pass one value per '?'"
            )
        text = query.sql(dialect=self.dialect, comments=False)
        started = time.perf_counter()
        rows = self._run(query, values)
        elapsed = time.perf_counter() - started
        return QueryResult(
            columns=rows.columns,
            rows=rows.rows,
            truncated=rows.more,
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
        assert self._conn is not None
        query = exp.select(column("table_name")).from_(table(CATALOG_TABLE))
        try:
            rows = self._conn.fetch(query).rows
        except QueryError as error:
            self.close()
            raise StoreError(
                f"{self.target.history!r} has no readable {CATALOG_TABLE} table "
                f"({error.message}); is it a foretab store? Build one with "
                "`foretab ingest PATH --db DB`"
            ) from None
        names = [row[0] for row in rows]
        bad = [name for name in names if not is_table_name(name)]
        if bad:
            self.close()
            raise StoreError(
                f"{CATALOG_TABLE} of {self.target.history!r} lists {bad[0]!r:.80}, which is not "
                "a foretab price table; the store was not written by foretab. Rebuild it with "
                "`foretab ingest PATH --db DB`"
            )
        return names

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
            query = check_query(statement, self.allowed_tables, self.reserved_names)
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

    def _timeout_error(self) -> QueryError:
        return QueryError(
            f"the query timed out after {self.timeout_s:g} s and was interrupted; "
            "narrow it (fewer tables, a WHERE clause) or raise the limit with --timeout "
            "(GuardedExecutor(timeout_s=...))"
        )

    def _run(self, query: exp.Query, params: tuple[Any, ...]) -> Any:
        conn = self._conn
        assert conn is not None
        fired = threading.Event()

        def interrupt() -> None:
            fired.set()
            conn.interrupt()

        # PostgreSQL also stops the statement server-side at timeout_s; this timer is the
        # backstop there (e.g. a slow fetch) and the only limit on DuckDB.
        timer = threading.Timer(self.timeout_s, interrupt)
        timer.daemon = True
        timer.start()
        try:
            # The cap was added to the query itself (max_rows + 1): ``more`` marks truncation.
            return conn.fetch(query, params, max_rows=self.max_rows)
        except QueryTimeoutError:
            raise self._timeout_error() from None
        except QueryError:
            if fired.is_set():
                raise self._timeout_error() from None
            raise
        finally:
            timer.cancel()


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
