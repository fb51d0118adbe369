"""The one interface to a database: read-only connections, parameter style, quoting.

Everything foretab runs against a store — the SQL guard's untrusted statements and
foretab's own trusted reads — is a sqlglot AST with ``?`` placeholders
(``exp.Placeholder``). A ``Backend`` renders that AST for its driver (native parameter
markers, quoted identifiers) and opens read-only connections that bind the values as
parameters. Nothing is ever pasted into SQL text.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from sqlglot import exp

from foretab.errors import QueryError

BackendName = Literal["duckdb", "postgresql"]
# Who a connection is for: ``guard`` runs untrusted SQL (least privilege: PostgreSQL's
# SELECT-only reader role), ``trusted`` is foretab's own code (the store owner, still
# read-only).
Purpose = Literal["guard", "trusted"]


@dataclass(frozen=True, slots=True)
class Rows:
    """Rows of one query; ``more`` says rows beyond the caps existed.

    ``by_bytes`` says the byte cap (not the row cap) cut the result.
    """

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    more: bool = False
    by_bytes: bool = False


_BATCH = 256


def collect(
    fetchmany: Callable[[int], Sequence[tuple[Any, ...]]],
    max_rows: int | None,
    max_bytes: int | None,
) -> tuple[list[tuple[Any, ...]], bool, bool]:
    """Fetch rows in batches up to the caps: ``(rows, more, cut_by_bytes)``.

    Bytes are the rows' in-memory size (``sys.getsizeof`` of every value), counted as
    they arrive, so a result of huge values stops at the cap instead of filling memory.
    """
    rows: list[tuple[Any, ...]] = []
    size = 0
    while True:
        want = _BATCH if max_rows is None else min(_BATCH, max_rows + 1 - len(rows))
        batch = fetchmany(want)
        for row in batch:
            if max_rows is not None and len(rows) >= max_rows:
                return rows, True, False
            if max_bytes is not None:
                size += sys.getsizeof(row) + sum(map(sys.getsizeof, row))
                if size > max_bytes:
                    return rows, True, True
            rows.append(row)
        if len(batch) < want:
            return rows, False, False


class ReadConnection(Protocol):
    """An open read-only connection to one database of a store."""

    @property
    def backend(self) -> Backend:
        """The backend that opened it."""
        ...

    @property
    def role(self) -> str:
        """The database role statements run as (empty for DuckDB, which has none)."""
        ...

    @property
    def driver(self) -> Any:
        """The driver connection (DuckDB or psycopg), for tests of the database's own defences."""
        ...

    def fetch(
        self,
        query: exp.Expression,
        params: Sequence[object] = (),
        *,
        max_rows: int | None = None,
        max_bytes: int | None = None,
    ) -> Rows:
        """Run one query AST with ``params`` bound to its ``?`` placeholders, in order.

        At most ``max_rows`` rows and ``max_bytes`` bytes of them are fetched (``more``
        says whether anything was left).

        Raises ``QueryError`` when the database refuses or fails, ``QueryTimeoutError``
        when it was interrupted (``interrupt`` or a server-side timeout).
        """
        ...

    def fetch_text(
        self,
        sql: str,
        values: list[object],
        *,
        max_rows: int | None = None,
        max_bytes: int | None = None,
    ) -> Rows:
        """``fetch`` of a statement already rendered by ``backend.render``, one value per marker."""
        ...

    def relation_names(self) -> frozenset[str]:
        """Every lower-case relation name an unqualified reference could resolve to.

        Tables and views of the store, system views (``duckdb_databases``,
        ``sqlite_master``, ``pg_settings``, ``information_schema`` views, …).
        """
        ...

    def interrupt(self) -> None:
        """Stop the running statement (safe to call from another thread)."""
        ...

    def close(self) -> None:
        """Close the connection (idempotent)."""
        ...


class Backend(Protocol):
    """A database engine foretab can store a corpus in."""

    @property
    def name(self) -> BackendName:
        """``duckdb`` or ``postgresql`` (the ``StoreLocation.backend`` value)."""
        ...

    @property
    def dialect(self) -> str:
        """The sqlglot dialect statements are parsed and generated in."""
        ...

    @property
    def renders_dialect_text(self) -> bool:
        """``render`` gives the dialect's own text without comments (nothing to render twice)."""
        ...

    def render(self, query: exp.Expression) -> str:
        """SQL text for the driver: native parameter markers, no comments."""
        ...

    def quote(self, identifier: str) -> str:
        """``identifier`` as a quoted SQL identifier of this dialect."""
        ...

    def connect(
        self,
        target: str,
        *,
        purpose: Purpose,
        timeout_s: float | None,
        memory_bytes: int | None = None,
        generation: str | None = None,
    ) -> ReadConnection:
        """Open ``target`` (a DuckDB path or a ``postgresql://`` URL) read-only.

        ``timeout_s`` is the server-side statement limit where the engine has one;
        ``memory_bytes`` the memory this process may use (an embedded engine gets half);
        ``generation`` the store generation to read (PostgreSQL; default: the current one
        the database's pointer names; a DuckDB file is one generation already).
        Raises ``StoreError`` when the database cannot be opened.
        """
        ...


def table(name: str) -> exp.Table:
    """A bare table reference whose name is always quoted when generated."""
    return exp.Table(this=exp.to_identifier(name, quoted=True))


def column(name: str) -> exp.Column:
    """A column reference whose name is always quoted when generated."""
    return exp.Column(this=exp.to_identifier(name, quoted=True))


def param() -> exp.Placeholder:
    """One ``?`` placeholder; its value is passed separately, in order."""
    return exp.Placeholder()


def quote(identifier: str, dialect: str) -> str:
    """``identifier`` quoted (and inner quotes doubled) for ``dialect``."""
    return exp.to_identifier(identifier, quoted=True).sql(dialect=dialect)


def count_params(query: exp.Expression) -> int:
    """How many ``?`` placeholders ``query`` has."""
    return sum(1 for _ in query.find_all(exp.Placeholder))


def bound_values(query: exp.Expression, params: Sequence[object]) -> list[object]:
    """``params`` as a list, after checking there is one per ``?`` of ``query``."""
    values = list(params)
    expected = count_params(query)
    if expected != len(values):
        raise QueryError(
            f"the query has {expected} placeholder(s) but {len(values)} "
            "parameter(s) were given; pass one value per '?'"
        )
    return values


class RendersToText:
    """``fetch`` for a connection whose backend renders ASTs: render, then ``fetch_text``.

    Both drivers' connections share it; only ``fetch_text`` (binding and fetching) differs.
    """

    backend: Any

    def fetch(
        self,
        query: exp.Expression,
        params: Sequence[object] = (),
        *,
        max_rows: int | None = None,
        max_bytes: int | None = None,
    ) -> Rows:
        values = bound_values(query, params)
        return self.fetch_text(
            self.backend.render(query), values, max_rows=max_rows, max_bytes=max_bytes
        )

    def fetch_text(
        self,
        sql: str,
        values: list[object],
        *,
        max_rows: int | None = None,
        max_bytes: int | None = None,
    ) -> Rows:
        raise NotImplementedError
