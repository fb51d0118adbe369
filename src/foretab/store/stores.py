"""The history and future stores as read-only objects for foretab's own code."""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from foretab.backend import column, param, table
from foretab.core.months import Month
from foretab.corpus.schema import CorpusSchema, SchemaError, default_schema
from foretab.errors import QueryError, StoreError
from foretab.store.catalog import CatalogEntry, EntityEntry
from foretab.store.connection import Side, open_side
from foretab.store.location import StoreLocation
from foretab.store.naming import (
    ARTIFACTS_TABLE,
    CATALOG_TABLE,
    GENERATION_KEY,
    META_TABLE,
    PROJECTS_TABLE,
    SCHEMA_KEY,
    SIDE_KEY,
    is_table_name,
)

if TYPE_CHECKING:
    import pandas as pd

    from foretab.backend import ReadConnection
    from foretab.sql.worker import StoreDescription

#: Tables read per query by ``panel`` (one ``UNION ALL``).
PANEL_TABLES = 500


class _Store:
    side: Side

    def __init__(
        self,
        db: str | StoreLocation,
        generation: str | None = None,
        *,
        described: StoreDescription | None = None,
    ) -> None:
        self.location = db if isinstance(db, StoreLocation) else StoreLocation.parse(db)
        self._pin = generation
        # ``described``: the metadata and catalog rows the guard's worker read from the
        # database it opened; the connection is then opened only if something needs it.
        self._opened: ReadConnection | None = None
        if described is None:
            self._opened = open_side(self.location, self.side, generation)
        try:
            meta = dict(described.meta if described else self._rows(meta_query()))
        except QueryError as exc:
            self.close()
            raise StoreError(
                f"{self.location.describe(self.side)} is not a foretab store ({exc.message}). "
                "Create it with `foretab ingest PATH --db DB`."
            ) from None
        self.meta: dict[str, str] = {str(k): str(v) for k, v in meta.items()}
        try:
            check_side(self.location, self.side, self.meta.get(SIDE_KEY))
        except StoreError:
            self.close()
            raise
        ref = self.meta.get("reference_month", "")
        self.reference_month: Month | None = Month.parse(ref) if ref else None
        try:
            self.schema: CorpusSchema = _schema_of(self.location, self.meta)
        except SchemaError as exc:
            self.close()
            raise StoreError(exc.message) from None
        self._catalog: list[CatalogEntry] | None = None
        self._entities: list[EntityEntry] | None = None
        try:
            # checked on open: a crafted store fails here, not mid-question
            self.catalog(None if described is None else described.catalog)
        except BaseException:
            self.close()
            raise

    @property
    def _conn(self) -> ReadConnection:
        """The store's own connection, opened on first use when the store was described.

        A DuckDB path that leads to another ingest's file by then is refused: this
        object's metadata and catalog are the described generation's.
        """
        if self._opened is None:
            conn = open_side(self.location, self.side, self._pin)
            try:
                query = _select(META_TABLE, "value").where(column("key").eq(param()))
                rows = conn.fetch(query, (GENERATION_KEY,)).rows
            except QueryError:
                rows = ()
            found = str(rows[0][0]) if rows and rows[0][0] else None
            if found != self.generation:
                conn.close()
                raise StoreError(
                    f"{self.location.describe(self.side)} was replaced by another ingest "
                    "after it was opened; open the store again"
                )
            self._opened = conn
        return self._opened

    def __enter__(self) -> _Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._opened is not None:
            self._opened.close()

    @property
    def generation(self) -> str | None:
        """The ingest this store's data comes from (both sides of one ingest share it)."""
        return self.meta.get(GENERATION_KEY) or None

    def _rows(
        self, query: exp.Query, params: tuple[object, ...] = ()
    ) -> tuple[tuple[Any, ...], ...]:
        return self._conn.fetch(query, params).rows

    def catalog(self, rows: Sequence[tuple[Any, ...]] | None = None) -> list[CatalogEntry]:
        """Every price table, sorted by city, district and year.

        ``rows``: the catalog's rows as read elsewhere (the guard's worker), checked here
        as the store's own read would be.
        """
        if self._catalog is None:
            if rows is None:
                rows = self._rows(catalog_query())
            self._catalog = [_catalog_entry(self.location, row, self.schema) for row in rows]
        return self._catalog

    def entities(self) -> list[EntityEntry]:
        """Every project with at least one observation on this side."""
        if self._entities is None:
            columns = ("city", "district", "project", "first_month", "last_month", "n_months")
            aliases = ("project_zh", "city_zh", "district_zh")
            query = _select(PROJECTS_TABLE, *columns, *aliases).order_by(
                column("city"), column("district"), column("project")
            )
            rows = self._rows(query)
            self._entities = [
                EntityEntry(
                    outer=str(city),
                    inner=str(district),
                    name=str(project),
                    first_month=Month.from_date(first),
                    last_month=Month.from_date(last),
                    n_months=int(n),
                    aliases=_aliases(pzh),
                    outer_aliases=_aliases(czh),
                    inner_aliases=_aliases(dzh),
                )
                for city, district, project, first, last, n, pzh, czh, dzh in rows
            ]
        return self._entities

    def last_month(self, outer: str, inner: str, name: str) -> Month | None:
        """One project's last month with an observation on this side, or None.

        One query, for a message: reading every project (``entities``) costs seconds at
        100x the corpus.
        """
        query = (
            _select(PROJECTS_TABLE, "last_month")
            .where(column("city").eq(param()))
            .where(column("district").eq(param()))
            .where(column("project").eq(param()))
        )
        rows = self._rows(query, (outer, inner, name))
        return Month.from_date(rows[0][0]) if rows and rows[0][0] is not None else None

    def panel(self, *, summed: bool = False) -> pd.DataFrame:
        """Every observation of the primary measure: ``city, district, project, month, price``.

        ``month`` is ``YYYY-MM``; the column names are the engine's slots, whatever the
        corpus schema calls them in the tables. ``summed``: the summed measure (units sold)
        instead, in the same ``price`` column (the schema must have one).

        Read ``PANEL_TABLES`` tables a query, every repeated text one shared object: at
        100x the corpus (6.2M rows, 30,590 tables) one query's row tuples and a string
        object per cell need several GB, and the store connection's memory limit is 1 GB.
        """
        import numpy as np
        import pandas as pd

        names = ["city", "district", "project", "month", "price"]
        entries = self.catalog()
        if not entries:
            return pd.DataFrame(columns=names)
        cols = self.schema.columns
        measure = cols.summed if summed and cols.summed else cols.value
        shared: dict[Any, Any] = {}
        month_text: dict[Any, Any] = {}

        def month_of(value: Any) -> Any:
            text = month_text.get(value)
            if text is None:
                stamp = pd.Timestamp(value)
                text = month_text[value] = np.nan if pd.isna(stamp) else stamp.strftime("%Y-%m")
            return text

        texts: list[list[Any]] = [[], [], [], []]
        prices: list[np.ndarray] = []
        for start in range(0, len(entries), PANEL_TABLES):
            batch = entries[start : start + PANEL_TABLES]
            selects = [
                exp.select(
                    exp.alias_(exp.cast(param(), "text"), "city"),
                    exp.alias_(exp.cast(param(), "text"), "district"),
                    exp.alias_(column(cols.entity), "project"),
                    exp.alias_(column(cols.month), "month"),
                    exp.alias_(column(measure), "price"),
                ).from_(table(e.table_name))
                for e in batch
            ]
            params = tuple(v for e in batch for v in (e.outer, e.inner))
            rows = self._conn.fetch(_union_all(selects), params).rows
            if not rows:
                continue
            city, district, project, month, price = zip(*rows, strict=True)
            for out, values in zip(texts[:3], (city, district, project), strict=True):
                out += map(shared.setdefault, values, values)
            texts[3] += map(month_of, month)
            prices.append(np.array(price, dtype=float))
        frame = pd.DataFrame(
            {
                **dict(zip(names[:4], texts, strict=True)),
                "price": np.concatenate(prices) if prices else np.empty(0),
            }
        )
        return frame.sort_values(["city", "district", "project", "month"], ignore_index=True)


class HistoryStore(_Store):
    """Months up to the reference month: what the question engine may see."""

    side: Side = "history"

    def save_artifact(self, name: str, data: bytes) -> None:
        """Persist a fitted model (or other blob) with the store, replacing atomically."""
        if self.location.backend == "duckdb":
            folder = self.location.artifacts_dir
            folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                os.replace(tmp, folder / name)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            return
        import psycopg
        from psycopg import sql

        # Into the generation this store reads: a model belongs to the data it was fitted on.
        artifacts = sql.Identifier(getattr(self._conn, "schema", "public"), ARTIFACTS_TABLE)
        with psycopg.connect(self.location.history) as conn:
            conn.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {} "
                    "(name TEXT PRIMARY KEY, created TIMESTAMP, data BYTEA)"
                ).format(artifacts)
            )
            conn.execute(
                sql.SQL(
                    "INSERT INTO {} (name, created, data) VALUES (%s, %s, %s) ON CONFLICT "
                    "(name) DO UPDATE SET created = EXCLUDED.created, data = EXCLUDED.data"
                ).format(artifacts),
                (name, dt.datetime.now(dt.UTC).replace(tzinfo=None), data),
            )

    def load_artifact(self, name: str) -> bytes | None:
        """A blob saved with ``save_artifact``, or None."""
        if self.location.backend == "duckdb":
            path = self.location.artifacts_dir / name
            return path.read_bytes() if path.exists() else None
        exists = (
            exp.select(exp.func("count", exp.Star()))
            .from_(exp.to_table("information_schema.tables"))
            .where(column("table_name").eq(param()))
            .where(column("table_schema").eq(exp.func("current_schema")))
        )
        if not self._rows(exists, (ARTIFACTS_TABLE,))[0][0]:
            return None
        query = _select(ARTIFACTS_TABLE, "data").where(column("name").eq(param()))
        rows = self._rows(query, (name,))
        return bytes(rows[0][0]) if rows else None


class FutureStore(_Store):
    """Months after the reference month: only the evaluator and the oracle may open it."""

    side: Side = "future"

    def __init__(self, db: str | StoreLocation, generation: str | None = None) -> None:
        """Open the future side of generation ``generation``.

        ``generation``: the one an open history store reads (``HistoryStore.generation``);
        default: the store's current one. PostgreSQL opens exactly that generation; a
        DuckDB future file of another generation is refused.
        """
        location = db if isinstance(db, StoreLocation) else StoreLocation.parse(db)
        theirs = generation
        if theirs is None:
            if location.backend == "postgresql":
                from foretab.backend.postgres import current_generation

                theirs = _with_pg(location.history, current_generation)
            else:
                history = read_meta(location.history, location.backend)
                theirs = None if history is None else history.get(GENERATION_KEY)
        pin = theirs if location.backend == "postgresql" else None
        super().__init__(location, pin)
        mine = self.meta.get(GENERATION_KEY)
        if mine and theirs and mine != theirs:
            self.close()
            raise StoreError(
                f"{self.location.describe('future')} comes from another ingest than "
                f"{self.location.describe('history')} (an ingest was interrupted between "
                "the two); re-run `foretab ingest PATH --db DB`."
            )


def open_history(db: str | StoreLocation) -> HistoryStore:
    """Open the history store read-only."""
    return HistoryStore(db)


def open_future(db: str | StoreLocation, generation: str | None = None) -> FutureStore:
    """Open the future store read-only (evaluation and the oracle ablation only).

    Pass the open history store's ``generation`` to read the future of the same ingest.
    """
    return FutureStore(db, generation)


def _with_pg(url: str, read: Any) -> Any:
    """``read(conn)`` on a short autocommit connection to ``url`` (errors: StoreError)."""
    import psycopg

    from foretab.backend.postgres import CONNECT_TIMEOUT_S, redact, redact_text

    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S) as conn:
            return read(conn)
    except psycopg.Error as error:
        raise StoreError(
            f"cannot read PostgreSQL store {redact(url)}: "
            f"{redact_text(str(error).strip(), url)}; check the --db URL"
        ) from None


def _aliases(value: Any) -> tuple[str, ...]:
    if value is None or value == "" or (isinstance(value, float) and value != value):
        return ()
    return (str(value),)


def current_generation(db: str | StoreLocation) -> str | None:
    """The generation (ingest id) a reader opening ``db`` now would see.

    None for a store written before generations were recorded. Cheap (one connection, one small read): a long-running reader such as ``foretab serve``
    calls it to notice that an ingest replaced the store under it.
    """
    location = db if isinstance(db, StoreLocation) else StoreLocation.parse(db)
    conn = open_side(location, "history")
    try:
        query = _select(META_TABLE, "value").where(column("key").eq(param()))
        rows = conn.fetch(query, (GENERATION_KEY,)).rows
    except QueryError as exc:
        raise StoreError(
            f"{location.describe()} is not a foretab store ({exc.message}). "
            "Create it with `foretab ingest PATH --db DB`."
        ) from None
    finally:
        conn.close()
    return str(rows[0][0]) if rows and rows[0][0] else None


def read_meta(target: str, backend: str = "duckdb") -> dict[str, str] | None:
    """The ``foretab_meta`` of one database, or None if it has none (not a store)."""
    from foretab.backend import get_backend

    try:
        conn = get_backend(backend).connect(target, purpose="trusted", timeout_s=None)
    except StoreError:
        return None
    try:
        rows = conn.fetch(_select(META_TABLE, "key", "value")).rows
    except QueryError:
        return None
    finally:
        conn.close()
    return {str(k): str(v) for k, v in rows}


def check_side(location: StoreLocation, side: Side, marked: str | None) -> None:
    """Refuse a database that holds the other side of a store (or looks like it does)."""
    if marked is None:
        # Stores ingested before the side was recorded: judge by the name.
        looks_future = location.history.removesuffix(".duckdb").endswith((".future", "_future"))
        marked = "future" if side == "history" and looks_future else side
    if marked == side:
        return
    which = location.describe(side)
    hint = (
        "pass the history store instead (corpus.duckdb, not corpus.future.duckdb; the "
        "database without _future)"
        if side == "history"
        else "open the future store through the history store's --db value"
    )
    raise StoreError(f"{which} holds the {marked} side of a store, not the {side} side; {hint}.")


#: The columns of ``foretab_catalog`` a store reads, in ``CatalogEntry`` order.
CATALOG_COLUMNS = ("table_name", "caption", "city", "district", "year", "rows")


def catalog_query() -> exp.Select:
    """The catalog as ``HistoryStore.catalog`` reads it (also the guard's worker)."""
    return _select(CATALOG_TABLE, *CATALOG_COLUMNS).order_by(
        column("city"), column("district"), column("year")
    )


def meta_query() -> exp.Select:
    """Every metadata row (``key, value``)."""
    return _select(META_TABLE, "key", "value")


def _select(name: str, *columns: str) -> exp.Select:
    return exp.select(*(column(c) for c in columns)).from_(table(name))


def _union_all(selects: list[exp.Select]) -> exp.Query:
    """``UNION ALL`` of ``selects`` as a balanced tree.

    A left-deep chain of hundreds of tables nests too deeply for sqlglot's generator.
    """
    if len(selects) == 1:
        return selects[0]
    middle = len(selects) // 2
    return exp.union(_union_all(selects[:middle]), _union_all(selects[middle:]), distinct=False)


def _schema_of(location: StoreLocation, meta: dict[str, str]) -> CorpusSchema:
    """The store's corpus schema (validated data), or the real-estate default."""
    text = meta.get(SCHEMA_KEY)
    if not text:
        return default_schema()
    return CorpusSchema.from_json(text, location.describe("history"))


def _catalog_entry(
    location: StoreLocation, row: tuple[Any, ...], schema: CorpusSchema
) -> CatalogEntry:
    """One catalog row, checked: a store from elsewhere may hold anything in it."""
    name, caption, city, district, year, n_rows = row
    # A slot the schema has no level for is empty; a level's value never is.
    slots_ok = all(
        isinstance(v, str) and (bool(v.strip()) == (schema.slot_level(slot) is not None))
        for slot, v in (("outer", city), ("inner", district))
    )
    texts_ok = isinstance(caption, str) and bool(caption.strip()) and slots_ok
    numbers_ok = (
        isinstance(year, int) and 1 <= year <= 9999 and isinstance(n_rows, int) and n_rows >= 0
    )
    if not (is_table_name(name) and texts_ok and numbers_ok):
        raise StoreError(
            f"{location.describe('history')} has an invalid {CATALOG_TABLE} row {row!r:.200}: "
            "each row must name a data table (…_YYYY) with a caption, its entity levels and "
            "year. The store was not written by foretab; rebuild it with "
            "`foretab ingest PATH --db DB`."
        )
    return CatalogEntry(name, caption, city, district, year, n_rows)
