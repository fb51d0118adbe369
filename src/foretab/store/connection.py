"""Trusted, read-only connections for foretab's own code (catalog, panels, training).

Untrusted SQL (users, generated queries) never comes here: it goes through
``foretab.sql.guard``. These connections are still read-only, so a bug in foretab itself
cannot change a store.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import psycopg

from foretab.errors import StoreError
from foretab.sql.connect import open_duckdb_readonly
from foretab.store.location import StoreLocation

if TYPE_CHECKING:  # pandas is imported only when a frame is asked for: it slows start-up
    import duckdb
    import pandas as pd

Side = Literal["history", "future"]


class ReadConnection:
    """A read-only connection to one side of a store, with ``?`` placeholders on both backends."""

    def __init__(self, location: StoreLocation, side: Side) -> None:
        self.location = location
        self.side = side
        target = location.history if side == "history" else location.future
        self._duck: duckdb.DuckDBPyConnection | None = None
        self._pg: psycopg.Connection[Any] | None = None
        if location.backend == "duckdb":
            if not Path(target).exists():
                raise StoreError(_missing_message(location, side))
            # The same locked-down configuration as the SQL guard: DuckDB refuses a second
            # connection to one file with a different configuration in the same process.
            self._duck = open_duckdb_readonly(target)
        else:
            try:
                self._pg = psycopg.connect(target, autocommit=True)
            except psycopg.OperationalError as exc:
                raise StoreError(
                    f"Cannot connect to {location.describe(side)}: {exc}".strip()
                    + f"\n{_missing_message(location, side)}"
                ) from exc
            self._pg.execute("SET default_transaction_read_only = on")

    def query(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """Rows of a trusted query written with ``?`` placeholders."""
        if self._duck is not None:
            return self._duck.execute(sql, list(params)).fetchall()
        assert self._pg is not None
        return self._pg.execute(sql.replace("?", "%s"), list(params)).fetchall()  # type: ignore[arg-type]

    def frame(self, sql: str, params: Sequence[object] = ()) -> pd.DataFrame:
        """A trusted query as a DataFrame."""
        import pandas as pd

        if self._duck is not None:
            return self._duck.execute(sql, list(params)).df()
        assert self._pg is not None
        cur = self._pg.execute(sql.replace("?", "%s"), list(params))  # type: ignore[arg-type]
        columns = [c.name for c in cur.description or ()]
        return pd.DataFrame(cur.fetchall(), columns=columns)

    def close(self) -> None:
        if self._duck is not None:
            self._duck.close()
            self._duck = None
        if self._pg is not None:
            self._pg.close()
            self._pg = None


def _missing_message(location: StoreLocation, side: Side) -> str:
    if side == "future":
        return (
            f"No future store at {location.describe('future')}: it exists only when the "
            "corpus was ingested with --reference-month before its last month. Re-run "
            "`foretab ingest PATH --db DB --reference-month YYYY-MM`."
        )
    return (
        f"No foretab store at {location.describe('history')}. Create one with "
        "`foretab ingest PATH --db DB` or `foretab demo --db DB`."
    )
