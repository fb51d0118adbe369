"""The history and future stores as read-only objects for foretab's own code."""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg

from foretab.errors import StoreError
from foretab.months import Month
from foretab.store.catalog import CatalogEntry, ProjectEntry
from foretab.store.connection import ReadConnection, Side
from foretab.store.location import StoreLocation
from foretab.store.naming import ARTIFACTS_TABLE, CATALOG_TABLE, META_TABLE, PROJECTS_TABLE

if TYPE_CHECKING:
    import pandas as pd


class _Store:
    side: Side

    def __init__(self, db: str | StoreLocation) -> None:
        self.location = db if isinstance(db, StoreLocation) else StoreLocation.parse(db)
        self._conn = ReadConnection(self.location, self.side)
        try:
            meta = dict(self._conn.query(f"SELECT key, value FROM {META_TABLE}"))
        except Exception as exc:
            self._conn.close()
            raise StoreError(
                f"{self.location.describe(self.side)} is not a foretab store ({exc}). "
                "Create it with `foretab ingest PATH --db DB`."
            ) from exc
        self.meta: dict[str, str] = {str(k): str(v) for k, v in meta.items()}
        ref = self.meta.get("reference_month", "")
        self.reference_month: Month | None = Month.parse(ref) if ref else None
        self._catalog: list[CatalogEntry] | None = None
        self._projects: list[ProjectEntry] | None = None

    def __enter__(self) -> _Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._conn.close()

    def catalog(self) -> list[CatalogEntry]:
        """Every price table, sorted by city, district and year."""
        if self._catalog is None:
            rows = self._conn.query(
                f"SELECT table_name, caption, city, district, year, rows FROM {CATALOG_TABLE} "
                "ORDER BY city, district, year"
            )
            self._catalog = [
                CatalogEntry(str(t), str(c), str(ci), str(d), int(y), int(n))
                for t, c, ci, d, y, n in rows
            ]
        return self._catalog

    def projects(self) -> list[ProjectEntry]:
        """Every project with at least one observation on this side."""
        if self._projects is None:
            rows = self._conn.query(
                "SELECT city, district, project, first_month, last_month, n_months, "
                f"project_zh, city_zh, district_zh FROM {PROJECTS_TABLE} "
                "ORDER BY city, district, project"
            )
            self._projects = [
                ProjectEntry(
                    city=str(city),
                    district=str(district),
                    project=str(project),
                    first_month=Month.from_date(first),
                    last_month=Month.from_date(last),
                    n_months=int(n),
                    aliases=_aliases(pzh),
                    city_aliases=_aliases(czh),
                    district_aliases=_aliases(dzh),
                )
                for city, district, project, first, last, n, pzh, czh, dzh in rows
            ]
        return self._projects

    def panel(self) -> pd.DataFrame:
        """Every observation: ``city, district, project, month (YYYY-MM), price``."""
        import pandas as pd

        parts = [
            f"SELECT {_literal(e.city)} AS city, {_literal(e.district)} AS district, "
            f"project_name AS project, month, price FROM {e.table_name}"
            for e in self.catalog()
        ]
        if not parts:
            return pd.DataFrame(columns=["city", "district", "project", "month", "price"])
        frame = self._conn.frame(" UNION ALL ".join(parts))
        frame["month"] = pd.to_datetime(frame["month"]).dt.strftime("%Y-%m")
        frame["price"] = frame["price"].astype(float)
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
        with psycopg.connect(self.location.history) as conn:
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {ARTIFACTS_TABLE} "
                "(name TEXT PRIMARY KEY, created TIMESTAMP, data BYTEA)"
            )
            conn.execute(
                f"INSERT INTO {ARTIFACTS_TABLE} (name, created, data) VALUES (%s, %s, %s) "
                "ON CONFLICT (name) DO UPDATE SET created = EXCLUDED.created, data = EXCLUDED.data",
                (name, dt.datetime.now(dt.UTC).replace(tzinfo=None), data),
            )

    def load_artifact(self, name: str) -> bytes | None:
        """A blob saved with ``save_artifact``, or None."""
        if self.location.backend == "duckdb":
            path = self.location.artifacts_dir / name
            return path.read_bytes() if path.exists() else None
        try:
            rows = self._conn.query(f"SELECT data FROM {ARTIFACTS_TABLE} WHERE name = ?", [name])
        except psycopg.errors.UndefinedTable:
            return None
        return bytes(rows[0][0]) if rows else None


class FutureStore(_Store):
    """Months after the reference month: only the evaluator and the oracle may open it."""

    side: Side = "future"


def open_history(db: str | StoreLocation) -> HistoryStore:
    """Open the history store read-only."""
    return HistoryStore(db)


def open_future(db: str | StoreLocation) -> FutureStore:
    """Open the future store read-only (evaluation and the oracle ablation only)."""
    return FutureStore(db)


def _aliases(value: Any) -> tuple[str, ...]:
    if value is None or value == "" or (isinstance(value, float) and value != value):
        return ()
    return (str(value),)


def _literal(text: str) -> str:
    # Catalog values are our own ingest output, but quote them properly all the same.
    return "'" + text.replace("'", "''") + "'"
