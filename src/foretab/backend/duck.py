"""DuckDB: the embedded default backend, opened read-only and locked down.

The file only, ``read_only=True``, external access (files, network, extensions,
replacement scans) off, no spilling to disk, configuration locked. Guard and trusted
connections share one configuration: DuckDB refuses a second connection to the same file
with a different configuration in one process.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp

from foretab.backend.base import BackendName, Purpose, RendersToText, Rows, collect, quote
from foretab.errors import QueryError, QueryTimeoutError, StoreError

MEMORY_LIMIT = "1GB"
# Every relation name, and whether it is a plain table of the store (not internal, not
# temporary): one scan of duckdb_tables(), which takes 0.5 s at 100x the corpus (30,592
# tables), serves both ``relation_names`` and ``base_table_names``.
_RELATIONS_SQL = (
    "SELECT table_name, NOT internal AND NOT temporary FROM duckdb_tables() "
    "UNION ALL SELECT view_name, FALSE FROM duckdb_views() "
    "UNION ALL SELECT sequence_name, FALSE FROM duckdb_sequences()"
)


class DuckDBBackend:
    """DuckDB files; parameters are DuckDB's own ``?``."""

    name: BackendName = "duckdb"
    dialect = "duckdb"
    #: ``render`` is the dialect's own text (sqlglot's ``?`` markers are DuckDB's)
    renders_dialect_text = True

    def render(self, query: exp.Expression) -> str:
        for node in query.find_all(exp.Placeholder):
            if node.this not in (None, ""):
                raise QueryError(f"placeholder {node.sql()} is not supported; use '?'")
        return query.sql(dialect=self.dialect, comments=False)

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
    ) -> DuckDBConnection:
        # One locked-down configuration; the guard times queries itself. A DuckDB file is
        # one generation (the store's pointer is resolved when the file is opened).
        del timeout_s, generation
        import duckdb

        if not Path(target).is_file():
            raise StoreError(
                f"DuckDB store {target!r} not found; create it with "
                f"`foretab ingest PATH --db {target}`"
            )
        config = {
            "enable_external_access": False,
            "autoload_known_extensions": False,
            "autoinstall_known_extensions": False,
            "allow_community_extensions": False,
            # No temp files: a runaway query fails on memory instead of writing to disk.
            "temp_directory": "",
            # Half the process cap: DuckDB fails cleanly at its limit, before the OS refuses.
            "memory_limit": MEMORY_LIMIT if memory_bytes is None else f"{memory_bytes // 2}B",
            # The guard's reads are small (a few tables' rows): a second thread costs more
            # CPU in hand-offs than it saves (~0.1 ms a read).
            "threads": 1 if purpose == "guard" else max(1, min(4, os.cpu_count() or 1)),
            # Two optimizers that only pay on large materializations (they change neither
            # results nor join order): off for the guard's small reads, 1.41 -> 1.25 ms a
            # read (docs/experiments.md#serve-cpu).
            **({"disabled_optimizers": GUARD_DISABLED_OPTIMIZERS} if purpose == "guard" else {}),
            # No pandas/Arrow objects of the calling Python frame as tables.
            "python_enable_replacements": False,
            "lock_configuration": True,
        }
        # The real file: after a store swap the same --db path names a new generation,
        # and DuckDB caches open databases by path.
        for _ in range(5):
            real = os.path.realpath(target)
            try:
                driver = duckdb.connect(real, read_only=True, config=config)
            except duckdb.Error as error:
                # An ingest swapped the store and removed the generation just resolved:
                # the path now names the new one, so resolve again.
                if not os.path.exists(real) and os.path.realpath(target) != real:
                    continue
                raise StoreError(
                    f"cannot open DuckDB store {target!r} read-only: {error}"
                ) from None
            return DuckDBConnection(self, driver)
        raise StoreError(
            f"cannot open DuckDB store {target!r}: it was replaced five times while opening; "
            "try again when the ingests into it have finished"
        )


#: DuckDB optimizers the guard's connections run without (``disabled_optimizers``).
GUARD_DISABLED_OPTIMIZERS = "statistics_propagation,compressed_materialization"

#: Statements DuckDB has parsed, kept per connection by their exact text (least recent
#: dropped past this many): the engine's reads repeat a few texts with other parameters,
#: and DuckDB's own parse is ~0.35 ms of a ~2 ms read.
PARSED_KEPT = 512


class DuckDBConnection(RendersToText):
    """A read-only DuckDB connection."""

    role = ""

    def __init__(self, backend: DuckDBBackend, driver: Any) -> None:
        self.backend = backend
        self.driver = driver
        self._relations: tuple[tuple[str, bool], ...] | None = None
        self._parsed: OrderedDict[str, Any] = OrderedDict()
        self._parsed_lock = threading.Lock()

    def _statement(self, sql: str) -> Any:
        """DuckDB's parse of ``sql`` (one statement), or ``sql`` itself if it is not one.

        Running the parsed statement is running the text: DuckDB parses the text the same
        way every time; only binding, planning and running happen per call.
        """
        with self._parsed_lock:
            parsed = self._parsed.get(sql)
            if parsed is not None:
                self._parsed.move_to_end(sql)
                return parsed
        statements = self.driver.extract_statements(sql)
        if len(statements) != 1:
            return sql  # run as text: DuckDB says what is wrong with it
        with self._parsed_lock:
            self._parsed[sql] = statements[0]
            if len(self._parsed) > PARSED_KEPT:
                self._parsed.popitem(last=False)
        return statements[0]

    def fetch_text(
        self,
        sql: str,
        values: list[object],
        *,
        max_rows: int | None = None,
        max_bytes: int | None = None,
    ) -> Rows:
        """``fetch`` of a statement already rendered for the driver, one value per marker."""
        import duckdb

        if self.driver is None:
            raise QueryError("the connection is closed; open the store again")
        try:
            cursor = self.driver.execute(self._statement(sql), values)
            columns = tuple(d[0] for d in cursor.description or ())
            if max_rows is None and max_bytes is None:
                return Rows(columns, tuple(cursor.fetchall()))
            rows, more, by_bytes = collect(cursor.fetchmany, max_rows, max_bytes)
        except duckdb.InterruptException:
            raise QueryTimeoutError("the query was interrupted") from None
        except duckdb.OutOfMemoryException:
            raise QueryError(
                "the query ran out of memory and was stopped; narrow it (fewer rows, "
                "smaller values)"
            ) from None
        except duckdb.Error as error:
            raise QueryError(_first_line(error, "the query failed")) from None
        return Rows(columns, tuple(rows), more, by_bytes)

    def relation_names(self) -> frozenset[str]:
        return frozenset(name.lower() for name, _ in self._relation_rows())

    def base_table_names(self) -> set[str]:
        """The store's plain tables (not internal, not temporary), as DuckDB names them."""
        return {name for name, base in self._relation_rows() if base}

    def _relation_rows(self) -> tuple[tuple[str, bool], ...]:
        """Read once per connection: the file is opened read-only and never changes."""
        if self._relations is None:
            query = sqlglot.parse_one(_RELATIONS_SQL, read="duckdb")
            rows = self.fetch(query).rows
            self._relations = tuple((str(name), bool(base)) for name, base in rows)
        return self._relations

    def interrupt(self) -> None:
        driver = self.driver
        if driver is not None:
            driver.interrupt()

    def close(self) -> None:
        driver, self.driver = self.driver, None
        self._parsed.clear()
        if driver is not None:
            driver.close()


def _first_line(error: BaseException, default: str) -> str:
    text = str(error).strip()
    return f"{default}: {text.splitlines()[0]}" if text else default
