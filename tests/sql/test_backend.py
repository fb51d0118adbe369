"""One backend interface: odd names and values are bound and quoted on every path.

A district named ``Why? District`` used to break ``panel()`` on PostgreSQL (``?`` was
rewritten to ``%s`` inside the SQL text); names with quotes or ``%`` must survive the
trusted reads, the history query and the guard on both backends.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import sqlglot
from sqlglot import exp
from tests.store_copy import copy_store

from foretab.backend import backend_for, column, get_backend, param, table
from foretab.core.months import Month
from foretab.core.plan import EntityRef
from foretab.engine.context import StoreContext
from foretab.errors import QueryError, StoreError
from foretab.sql.build import history_query
from foretab.sql.guard import GuardedExecutor
from foretab.store import open_history
from foretab.store.ingest import ingest_frame

ODD_DISTRICT = "Why? District"
ODD_PROJECTS = ('O\'Brien "Tower"', "100% Plaza ?", "Plain Park")


def odd_frame() -> pd.DataFrame:
    rows = [
        {
            "city": "Nanjing",
            "district": ODD_DISTRICT,
            "project": project,
            "month": f"2021-{month:02d}",
            "avg_price": 10_000.0 * (i + 1) + month,
            "units_sold": month,
        }
        for i, project in enumerate(ODD_PROJECTS)
        for month in range(1, 13)
    ]
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


@pytest.fixture(scope="module")
def pristine_odd_duckdb(tmp_path_factory: pytest.TempPathFactory) -> str:
    """``odd_frame()`` ingested on DuckDB once; the tests that tamper with a store copy it."""
    db = str(tmp_path_factory.mktemp("pristine-odd") / "odd.duckdb")
    ingest_frame(odd_frame(), db, Month.parse("2021-12"))
    return db


@pytest.fixture(
    scope="module", params=["duckdb", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
def odd_db(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    if request.param == "duckdb":
        db = str(tmp_path_factory.mktemp("odd") / "odd.duckdb")
        ingest_frame(odd_frame(), db, Month.parse("2021-12"))
        yield db
        return
    server = request.getfixturevalue("pg_server")
    name = server.fresh_dbname("odd")
    db = server.url(name)
    ingest_frame(odd_frame(), db, Month.parse("2021-12"))
    yield db
    import psycopg

    with psycopg.connect(server.url("postgres"), autocommit=True) as conn:
        for each in (name, f"{name}_future"):
            conn.execute(f'DROP DATABASE IF EXISTS "{each}" WITH (FORCE)')


def test_panel_catalog_and_projects_keep_odd_names(odd_db: str) -> None:
    with open_history(odd_db) as store:
        districts = {e.inner for e in store.catalog()}
        projects = {p.name for p in store.entities()}
        panel = store.panel()
    assert districts == {ODD_DISTRICT, "Pudong New Area"}
    assert set(ODD_PROJECTS) <= projects
    odd = panel[panel["district"] == ODD_DISTRICT]
    assert set(odd["project"]) == set(ODD_PROJECTS)
    assert len(odd) == 36
    quoted = odd[odd["project"] == ODD_PROJECTS[0]].sort_values("month")
    assert quoted["price"].tolist() == [10_000.0 + m for m in range(1, 13)]
    assert quoted["month"].iloc[0] == "2021-01"


def test_history_query_binds_odd_names_through_the_guard(odd_db: str) -> None:
    with open_history(odd_db) as store:
        tables = [e for e in store.catalog() if e.inner == ODD_DISTRICT]
    refs = [EntityRef("Nanjing", ODD_DISTRICT, p) for p in ODD_PROJECTS[:2]]
    query = history_query(tables, refs, Month(2021, 3), Month(2021, 4))
    assert query is not None
    with GuardedExecutor(odd_db) as guard:
        result = guard.execute(query.ast, query.params)
    # ORDER BY project_name: "100% Plaza ?" sorts before "O'Brien \"Tower\"".
    assert [row[1:3] for row in result.rows] == [
        (ODD_DISTRICT, ODD_PROJECTS[1]),
        (ODD_DISTRICT, ODD_PROJECTS[1]),
        (ODD_DISTRICT, ODD_PROJECTS[0]),
        (ODD_DISTRICT, ODD_PROJECTS[0]),
    ]
    assert [row[4] for row in result.rows] == [20_003.0, 20_004.0, 10_003.0, 10_004.0]


def test_percent_and_question_marks_in_literals_next_to_parameters(odd_db: str) -> None:
    with open_history(odd_db) as store:
        name = next(e.table_name for e in store.catalog() if e.inner == ODD_DISTRICT)
    sql = (
        f"SELECT project_name, '%s %% ?' AS lit FROM {name} "
        "WHERE project_name LIKE '%?%' AND month = ? ORDER BY 1"
    )
    with GuardedExecutor(odd_db) as guard:
        result = guard.execute(sql, [Month(2021, 5).first_day])
    assert result.rows == ((ODD_PROJECTS[1], "%s %% ?"),)


def test_trusted_connection_binds_values(odd_db: str) -> None:
    backend = backend_for(odd_db)
    conn = backend.connect(odd_db, purpose="trusted", timeout_s=None)
    try:
        query = (
            exp.select(column("district"))
            .from_(table("foretab_projects"))
            .where(column("project").eq(param()))
        )
        assert conn.fetch(query, [ODD_PROJECTS[0]]).rows == ((ODD_DISTRICT,),)
        with pytest.raises(QueryError, match="placeholder"):
            conn.fetch(query, [])
    finally:
        conn.close()


@pytest.mark.parametrize("name", ["duckdb", "postgresql"])
def test_render_numbers_parameters_in_text_order_and_quotes(name: str) -> None:
    backend = get_backend(name)
    query = sqlglot.parse_one(
        "SELECT ? AS a FROM t WHERE b = ? AND c LIKE '%?' ORDER BY d LIMIT ?", read="duckdb"
    )
    rendered = backend.render(query)
    if name == "postgresql":
        assert rendered == "SELECT $1 AS a FROM t WHERE b = $2 AND c LIKE '%?' ORDER BY d LIMIT $3"
    else:
        assert rendered == "SELECT ? AS a FROM t WHERE b = ? AND c LIKE '%?' ORDER BY d LIMIT ?"
    assert backend.quote('we"ird') == '"we""ird"'
    assert backend.render(exp.select("*").from_(table('x"; DROP TABLE y; --'))) == (
        'SELECT * FROM "x""; DROP TABLE y; --"'
    )


@pytest.mark.parametrize("name", ["duckdb", "postgresql"])
def test_render_numbers_parameters_of_ctes_before_the_body(name: str) -> None:
    # sqlglot writes a query's body before the WITH clause it prepends; the numbers must
    # still follow the text, where the parameters' order is defined.
    query = sqlglot.parse_one(
        "WITH w AS (SELECT ? AS a WHERE ? > 0) SELECT a FROM w WHERE a < ? LIMIT ?",
        read="duckdb",
    )
    rendered = get_backend(name).render(query)
    if name == "postgresql":
        assert (
            rendered
            == "WITH w AS (SELECT $1 AS a WHERE $2 > 0) SELECT a FROM w WHERE a < $3 LIMIT $4"
        )
    else:
        assert (
            rendered == "WITH w AS (SELECT ? AS a WHERE ? > 0) SELECT a FROM w WHERE a < ? LIMIT ?"
        )


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT ? AS a FROM t WHERE b = ? AND c LIKE '%?' /* note */ ORDER BY d",
        "WITH w AS (SELECT ? AS a WHERE ? > 0) SELECT a FROM w WHERE a < ? -- tail",
        "SELECT CAST(? AS TEXT) AS city, x FROM t1 WHERE x IN (?, ?) UNION ALL "
        "SELECT CAST(? AS TEXT), x FROM t2 ORDER BY city NULLS FIRST",
    ],
)
def test_a_backend_that_renders_dialect_text_runs_the_checked_text(sql: str) -> None:
    # The guard's worker runs a checked statement's text as is when the backend says its
    # rendering is that text (it saves rendering the statement a second time).
    from foretab.sql.statement import checked_query

    for name in ("duckdb", "postgresql"):
        backend = get_backend(name)
        checked = checked_query(sql, "duckdb", {"t", "t1", "t2"}, frozenset(), 11)
        assert (backend.render(checked.query) == checked.text) is backend.renders_dialect_text


def _tamper(db: str, statement: str) -> None:
    if db.startswith("postgresql://"):
        from sql_stores import pg_admin

        with pg_admin(db) as conn:
            conn.execute(statement)
        return
    import duckdb

    with duckdb.connect(db) as conn:
        conn.execute(statement)


@pytest.mark.parametrize(
    "bad_name",
    [
        "foretab_meta",
        "project_price_table_x; SELECT pg_read_file('/etc/passwd')",
        'project_price_table_a" UNION SELECT 1 --',
        "pg_settings",
    ],
)
def test_crafted_catalog_rows_are_refused_on_open(
    bad_name: str, tmp_path: Path, request: pytest.FixtureRequest, pristine_odd_duckdb: str
) -> None:
    for backend in ("duckdb", "postgresql"):
        if backend == "duckdb":
            db = copy_store(pristine_odd_duckdb, tmp_path / f"crafted-{len(bad_name)}")
        else:
            server = request.getfixturevalue("pg_server")
            db = server.url(server.fresh_dbname("crafted"))
            ingest_frame(odd_frame(), db, Month.parse("2021-12"))
        escaped = bad_name.replace("'", "''")
        _tamper(
            db,
            "INSERT INTO foretab_catalog VALUES "
            f"('{escaped}', 'Evil', 'Nanjing', 'Evil District', 2021, 1)",
        )
        with pytest.raises(StoreError, match="not written by foretab"):
            open_history(db)
        with pytest.raises(StoreError, match="not written by foretab"):
            GuardedExecutor(db)


def test_backend_imports_neither_sql_nor_store_and_store_not_sql() -> None:
    code = (
        "import sys, foretab.backend, foretab.backend.duck, foretab.backend.postgres; "
        "a = sorted(m for m in sys.modules if m.startswith(('foretab.sql', 'foretab.store'))); "
        "import foretab.store, foretab.store.stores, foretab.store.ingest; "
        "b = sorted(m for m in sys.modules if m.startswith('foretab.sql')); "
        "print(a, b)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[] []"


@pytest.mark.parametrize(
    "statements",
    [
        pytest.param(
            [
                "DROP TABLE {t}",
                "CREATE VIEW {t} AS SELECT * FROM foretab_meta",
            ],
            id="view-named-like-a-price-table",
        ),
        pytest.param(["CREATE MACRO median(x) AS 42"], id="user-macro"),
    ],
)
def test_crafted_duckdb_views_and_macros_are_refused(
    tmp_path: Path, statements: list[str], pristine_odd_duckdb: str
) -> None:
    db = copy_store(pristine_odd_duckdb, tmp_path)
    with open_history(db) as store:
        name = store.catalog()[0].table_name
    for statement in statements:
        _tamper(db, statement.format(t=name))
    with pytest.raises(StoreError, match="not written by foretab"):
        GuardedExecutor(db)
    # Described by the worker first (the engine's open): refused all the same, at open.
    with pytest.raises(StoreError, match="not written by foretab"):
        GuardedExecutor(db, describe=True).wait_open()
    with pytest.raises(StoreError, match="not written by foretab"):
        StoreContext.open_session(db)


@pytest.mark.postgres
def test_crafted_postgres_views_and_functions_are_refused(request: pytest.FixtureRequest) -> None:
    server = request.getfixturevalue("pg_server")
    db = server.url(server.fresh_dbname("crafted_fn"))
    ingest_frame(odd_frame(), db, Month.parse("2021-12"))
    with open_history(db) as store:
        name = store.catalog()[0].table_name
    _tamper(db, f'DROP TABLE "{name}"')
    _tamper(db, f'CREATE VIEW "{name}" AS SELECT * FROM pg_settings')
    _tamper(db, f'GRANT SELECT ON "{name}" TO foretab_reader')
    with pytest.raises(StoreError, match="not written by foretab"):
        GuardedExecutor(db)
