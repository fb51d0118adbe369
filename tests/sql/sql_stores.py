"""Small history + future stores on both backends, and a snapshot to prove nothing changed.

Imported by ``tests/sql/conftest.py`` and the tests (plain module: pytest puts this folder
on ``sys.path``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from foretab.backend.postgres import ensure_reader_role
from foretab.core.months import Month
from foretab.store.ingest import ingest_frame
from foretab.store.location import StoreLocation

HISTORY_2020 = "project_price_table_jiangning_district_nanjing_2020"
HISTORY_2021 = "project_price_table_jiangning_district_nanjing_2021"
SHANGHAI_2021 = "project_price_table_pudong_new_area_shanghai_2021"
FUTURE_2022 = "project_price_table_jiangning_district_nanjing_2022"
PROJECT = "Greenland Lixiang City"


def demo_frame() -> pd.DataFrame:
    """Two Nanjing projects over 2020-2022 and one Shanghai row; R = 2021-12."""
    rows = []
    for project, base in ((PROJECT, 20_000.0), ("Poly Central Park", 30_000.0)):
        for year in (2020, 2021, 2022):
            for month in range(1, 13):
                rows.append(
                    {
                        "city": "Nanjing",
                        "district": "Jiangning District",
                        "project": project,
                        "month": f"{year}-{month:02d}",
                        "avg_price": base + (year - 2020) * 1000 + month * 10,
                        "units_sold": month,
                    }
                )
    rows.append(
        {
            "city": "Shanghai",
            "district": "Pudong New Area",
            "project": "Tomson Riviera",
            "month": "2021-06",
            "avg_price": 90_000.0,
            "units_sold": 3,
        }
    )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class SqlStore:
    """A built store: ``db`` is the ``--db`` value; ``folder`` holds DuckDB files."""

    backend: str
    db: str
    location: StoreLocation
    folder: Path | None

    @property
    def future_ref(self) -> str:
        """How a hostile statement would name the future store (file path or db name)."""
        if self.backend == "duckdb":
            return self.location.future
        return self.location.database_name("future")

    def snapshot(self) -> tuple:
        """Everything that must not change: files, or tables/rows/checksums per database."""
        if self.backend == "duckdb":
            assert self.folder is not None
            # Every file of the store, through its links into the current generation.
            return tuple(
                (
                    str(p.relative_to(self.folder)),
                    p.stat().st_size,
                    p.stat().st_mtime_ns,
                    _content(p),
                )
                for p in sorted(self.folder.rglob("*"))
                if p.exists()
            )
        return (_pg_snapshot(self.location.history), _pg_snapshot(self.location.future))


def pg_admin(url: str, history: str | None = None):  # type: ignore[no-untyped-def]
    """An autocommit admin connection to ``url`` whose unqualified names reach the store's
    current generation (named by the pointer in ``history``, default ``url`` itself)."""
    import psycopg

    from foretab.backend.postgres import store_schema

    with psycopg.connect(history or url, autocommit=True) as conn:
        schema = store_schema(conn)
    return psycopg.connect(url, autocommit=True, options=f"-c search_path={schema}")


class FileBytes:
    """A file's whole content, compared byte for byte; its repr (a failure's report) names
    its length and SHA-256 instead of printing megabytes.

    Comparing the bytes is the same check as comparing their SHA-256 (a stricter one, if
    anything) without hashing each store file (~2 MB) twice a case: the hashing was ~1.8 s
    of the fast suite's CPU, the hostile-statement cases' snapshots most of it.
    """

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FileBytes) and self.data == other.data

    def __hash__(self) -> int:
        return hash(self.data)

    def __repr__(self) -> str:
        return f"<{len(self.data)} bytes, sha256 {hashlib.sha256(self.data).hexdigest()}>"


def _content(path: Path) -> str | FileBytes:
    if path.is_dir():
        return "dir"
    return FileBytes(path.read_bytes())


# One autocommit connection per database for the snapshots, kept open: a new connection
# (a new server process that must load its catalog caches) cost ~11 ms of the ~13 ms a
# snapshot took, and the hostile-statement tests take two snapshots of two databases per
# case. Autocommit: every query sees what is committed at that moment, as a fresh
# connection would. Closed (``close_snapshot_connections``) before a store is dropped.
_SNAPSHOT_CONNECTIONS: dict[str, object] = {}


def close_snapshot_connections() -> None:
    """Close the kept snapshot connections (before their databases are dropped)."""
    while _SNAPSHOT_CONNECTIONS:
        _, conn = _SNAPSHOT_CONNECTIONS.popitem()
        conn.close()  # type: ignore[attr-defined]


def _pg_snapshot(url: str) -> tuple:
    import psycopg

    conn = _SNAPSHOT_CONNECTIONS.get(url)
    if conn is not None and not conn.closed:  # type: ignore[attr-defined]
        try:
            return _pg_snapshot_on(conn)
        except psycopg.OperationalError:  # the kept connection was cut: a fresh one, as before
            conn.close()  # type: ignore[attr-defined]
    conn = psycopg.connect(url, autocommit=True)
    _SNAPSHOT_CONNECTIONS[url] = conn
    return _pg_snapshot_on(conn)


def _pg_snapshot_on(conn) -> tuple:  # type: ignore[no-untyped-def]
    from psycopg import sql

    # Three round trips whatever the number of tables: the table list, every table's row
    # count and checksum in one UNION ALL, and the cluster-wide extras. (One query per table
    # made this ~30 ms a call; the hostile-statement tests take two snapshots per case.)
    tables = [
        r[0]
        for r in conn.execute(
            "SELECT table_schema || '.' || table_name FROM information_schema.tables "
            "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1"
        ).fetchall()
    ]
    sums: list[tuple[object, ...]] = []
    if tables:
        one = sql.SQL(
            "(SELECT {}::text AS name, count(*) AS n, "
            "md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS sum FROM {} t)"
        )
        parts = [
            one.format(sql.Literal(qualified), sql.Identifier(*qualified.split(".", 1)))
            for qualified in tables
        ]
        rows = conn.execute(sql.SQL(" UNION ALL ").join(parts)).fetchall()
        by_name = {row[0]: (row[0], row[1], row[2]) for row in rows}
        sums = [by_name[qualified] for qualified in tables]
    extras = conn.execute(
        "SELECT (SELECT count(*) FROM pg_largeobject_metadata), "
        "(SELECT string_agg(datname, ',' ORDER BY datname) FROM pg_database), "
        "(SELECT string_agg(rolname || ':' || rolsuper::text, ',' ORDER BY rolname) FROM pg_roles)"
    ).fetchone()
    return (tuple(sums), tuple(extras))


def build_store(backend: str, tmp: Path, pg_url: str | None) -> SqlStore:
    if backend == "duckdb":
        folder = tmp / "store"
        folder.mkdir()
        db = str(folder / "corpus.duckdb")
    else:
        assert pg_url is not None
        folder = None
        db = pg_url
    summary = ingest_frame(demo_frame(), db, Month.parse("2021-12"))
    if backend == "postgresql":
        # Idempotent; the lead's ingest calls it too once it can import it.
        ensure_reader_role(db)
    return SqlStore(backend, db, summary.location, folder)
