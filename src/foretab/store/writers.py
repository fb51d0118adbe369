"""Write a ``SideLayout`` to DuckDB or PostgreSQL.

Both writers build the new store completely before it becomes visible: DuckDB into a
new generation's files (``foretab.store.swap``), PostgreSQL into a new generation's schema,
one transaction per database (``foretab.store.pg_swap``). A failure leaves the old store
as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import duckdb
import pandas as pd
import psycopg
from psycopg import sql

from foretab.store.layout import SideLayout
from foretab.store.naming import (
    ARTIFACTS_TABLE,
    CATALOG_TABLE,
    META_TABLE,
    PROJECTS_TABLE,
    is_table_name,
)

Progress = Callable[[str], None]  # called once per table written, with its name

_CATALOG_COLUMNS = (
    "table_name TEXT, caption TEXT, city TEXT, district TEXT, year INTEGER, rows INTEGER"
)
_PROJECT_COLUMNS = (
    "city TEXT, district TEXT, project TEXT, first_month DATE, last_month DATE, "
    "n_months INTEGER, project_zh TEXT, city_zh TEXT, district_zh TEXT"
)


#: Tables created per DuckDB transaction by ``write_duckdb``: the real corpus's 304
#: history tables in one, as before; at 100x the corpus (30,590) about 30.
TABLES_PER_COMMIT = 1_000


#: DuckDB's memory limit while ``write_duckdb`` builds a store file.
WRITE_MEMORY_LIMIT = "2GB"


def write_duckdb(
    path: str, layout: SideLayout, meta: Mapping[str, str], progress: Progress
) -> None:
    """Create a new DuckDB store file at ``path`` (which must not exist yet)."""
    # Tables written stay in DuckDB's buffer pool up to its memory limit (80% of RAM by
    # default): at 100x the corpus the ingest's RSS grew with the 11 GB file. Written
    # blocks are on disk, so a lower limit only evicts them.
    conn = duckdb.connect(path, config={"memory_limit": WRITE_MEMORY_LIMIT})
    try:
        # Each row's table as its index in ``layout.tables``: an integer filter is pruned
        # by the sorted temp table's zone maps, a text one only on its first 8 bytes
        # (most table names share them), which made every table scan all rows.
        names = [spec.table_name for spec in layout.tables]
        codes = pd.Categorical(layout.rows["_table"], categories=names).codes
        incoming = layout.rows.drop(columns="_table").assign(_table_id=codes)
        # Copy the frame into DuckDB once; scanning a pandas frame per table is far slower.
        conn.register("incoming_frame", incoming)
        # Sorted by table: each table's filter below reads only its own row groups.
        conn.execute(
            "CREATE TEMP TABLE incoming_rows AS SELECT * FROM incoming_frame ORDER BY _table_id"
        )
        conn.unregister("incoming_frame")
        del incoming
        extras = "".join(f', CAST("{c}" AS VARCHAR) AS "{c}"' for c in layout.extra_columns)
        # Column names come from the corpus schema (validated identifiers), quoted anyway.
        cols = layout.columns
        casts = [(cols.entity, "VARCHAR"), (cols.month, "DATE"), (cols.value, "DOUBLE")]
        casts += [(cols.summed, "INTEGER")] if cols.summed else []
        select = ", ".join(f'CAST("{c}" AS {t}) AS "{c}"' for c, t in casts)
        # One transaction per TABLES_PER_COMMIT tables: a commit per table costs more than
        # the table, and one for all of them holds every table in memory until the end.
        # (The file is a new generation nobody reads before ``swap_in`` renames it in.)
        for start in range(0, len(names), TABLES_PER_COMMIT):
            conn.execute("BEGIN TRANSACTION")
            for index in range(start, min(start + TABLES_PER_COMMIT, len(names))):
                conn.execute(
                    f'CREATE TABLE "{names[index]}" AS SELECT {select}{extras} '
                    f"FROM incoming_rows WHERE _table_id = ? "
                    f'ORDER BY "{cols.entity}", "{cols.month}"',
                    [index],
                )
                progress(names[index])
            conn.execute("COMMIT")
        conn.execute("BEGIN TRANSACTION")
        conn.execute("DROP TABLE incoming_rows")
        _write_metadata_duckdb(conn, layout, meta)
        conn.execute("COMMIT")
        conn.execute("CHECKPOINT")
    finally:
        conn.close()


def _write_metadata_duckdb(
    conn: duckdb.DuckDBPyConnection, layout: SideLayout, meta: Mapping[str, str]
) -> None:
    conn.execute(f"CREATE TABLE {CATALOG_TABLE} ({_CATALOG_COLUMNS})")
    catalog = pd.DataFrame(
        [[s.table_name, s.caption, s.outer, s.inner, s.year, s.rows] for s in layout.tables],
        columns=["table_name", "caption", "city", "district", "year", "rows"],
    )
    conn.register("incoming_catalog", catalog)  # executemany is slow in DuckDB
    conn.execute(f"INSERT INTO {CATALOG_TABLE} SELECT * FROM incoming_catalog")
    conn.unregister("incoming_catalog")
    conn.execute(f"CREATE TABLE {PROJECTS_TABLE} ({_PROJECT_COLUMNS})")
    conn.register("incoming_projects", layout.projects)
    conn.execute(f"INSERT INTO {PROJECTS_TABLE} SELECT * FROM incoming_projects")
    conn.unregister("incoming_projects")
    conn.execute(f"CREATE TABLE {META_TABLE} (key TEXT, value TEXT)")
    conn.executemany(f"INSERT INTO {META_TABLE} VALUES (?, ?)", list(meta.items()))


def write_postgres(
    url: str,
    layout: SideLayout,
    meta: Mapping[str, str],
    progress: Progress,
    schema: str,
    finish: Callable[[psycopg.Connection[Any]], None] | None = None,
) -> None:
    """Write one side of a new generation into the new schema ``schema``, in one transaction.

    ``finish(conn)`` runs last, inside the same transaction (the history side's switch).
    Nothing that exists is changed: readers see the schema only once a pointer names it.
    """
    with psycopg.connect(url) as conn:  # one transaction: commit on success, rollback on error
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        extras = [sql.SQL(", {} TEXT").format(sql.Identifier(c)) for c in layout.extra_columns]
        cols = layout.columns
        columns = [*cols.standard, *layout.extra_columns]
        types = [(cols.entity, "TEXT"), (cols.month, "DATE"), (cols.value, "DOUBLE PRECISION")]
        types += [(cols.summed, "INTEGER")] if cols.summed else []
        definitions = sql.SQL(", ").join(
            sql.SQL("{} {}").format(sql.Identifier(c), sql.SQL(t)) for c, t in types
        )
        groups = dict(tuple(layout.rows.groupby("_table", sort=False)))
        for spec in layout.tables:
            ident = sql.Identifier(schema, spec.table_name)
            conn.execute(
                sql.SQL("CREATE TABLE {} ({}{})").format(
                    ident, definitions, sql.SQL("").join(extras)
                )
            )
            part = groups[spec.table_name].sort_values([cols.entity, cols.month])
            with conn.cursor().copy(
                sql.SQL("COPY {} ({}) FROM STDIN").format(
                    ident, sql.SQL(", ").join(map(sql.Identifier, columns))
                )
            ) as copy:
                for record in part[columns].itertuples(index=False, name=None):
                    copy.write_row([_pg_value(v) for v in record])
            progress(spec.table_name)

        def named(table: str) -> sql.Composed:
            return sql.SQL("{}").format(sql.Identifier(schema, table))

        conn.execute(
            sql.SQL("CREATE TABLE {} (" + _CATALOG_COLUMNS + ")").format(named(CATALOG_TABLE))
        )
        with conn.cursor() as cur:
            cur.executemany(
                sql.SQL("INSERT INTO {} VALUES (%s, %s, %s, %s, %s, %s)").format(
                    named(CATALOG_TABLE)
                ),
                [
                    [s.table_name, s.caption, s.outer, s.inner, s.year, s.rows]
                    for s in layout.tables
                ],
            )
            conn.execute(
                sql.SQL("CREATE TABLE {} (" + _PROJECT_COLUMNS + ")").format(named(PROJECTS_TABLE))
            )
            cur.executemany(
                sql.SQL("INSERT INTO {} VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)").format(
                    named(PROJECTS_TABLE)
                ),
                [
                    [_pg_value(v) for v in r]
                    for r in layout.projects.itertuples(index=False, name=None)
                ],
            )
            conn.execute(
                sql.SQL("CREATE TABLE {} (key TEXT, value TEXT)").format(named(META_TABLE))
            )
            cur.executemany(
                sql.SQL("INSERT INTO {} VALUES (%s, %s)").format(named(META_TABLE)),
                list(meta.items()),
            )
        if finish is not None:
            finish(conn)


def drop_legacy_tables(conn: psycopg.Connection[Any]) -> None:
    """Drop the ``public`` tables of a store of the older single-schema layout.

    Only what foretab made: the tables its old catalog lists, and its own metadata.
    """
    has_catalog = conn.execute("SELECT to_regclass('public.foretab_catalog')").fetchone()
    names: list[str] = []
    if has_catalog and has_catalog[0] is not None:
        listed = conn.execute(f"SELECT table_name FROM public.{CATALOG_TABLE}").fetchall()
        # A crafted catalog must not make ingest drop tables foretab never wrote.
        names = [r[0] for r in listed if is_table_name(r[0])]
    # Fitted models describe the old data: drop them with it.
    for name in [*names, CATALOG_TABLE, PROJECTS_TABLE, META_TABLE, ARTIFACTS_TABLE]:
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier("public", name)))


def _pg_value(value: object) -> object:
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and value != value:
        return None
    if hasattr(value, "item"):
        return value.item()  # numpy scalar → Python
    return value
