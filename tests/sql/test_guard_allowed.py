"""Legitimate queries run on both backends; limits, parameters and isolation hold."""

from __future__ import annotations

import datetime as dt

import pytest
import sqlglot
from sql_stores import FUTURE_2022, HISTORY_2020, HISTORY_2021, PROJECT, SHANGHAI_2021
from sqlglot import exp

from foretab.errors import GuardError, QueryError, StoreError
from foretab.sql.guard import GuardedExecutor, QueryResult, run_query


def test_twelve_months_of_a_project(store, clean_cwd) -> None:
    with GuardedExecutor(store.db) as guard:
        result = guard.execute(
            f"SELECT month, price FROM {HISTORY_2021} WHERE project_name = ? ORDER BY month",
            [PROJECT],
        )
    assert isinstance(result, QueryResult)
    assert result.columns == ("month", "price")
    assert [r[0] for r in result.rows] == [dt.date(2021, m, 1) for m in range(1, 13)]
    assert [r[1] for r in result.rows] == [21_000.0 + m * 10 for m in range(1, 13)]
    assert not result.truncated
    assert result.elapsed_s >= 0


def test_cte_and_union_all_over_year_tables(store, clean_cwd) -> None:
    sql = f"""
        WITH years AS (
            SELECT project_name, month, price FROM {HISTORY_2020}
            UNION ALL
            SELECT project_name, month, price FROM {HISTORY_2021}
        ), yearly AS (
            SELECT project_name, EXTRACT(YEAR FROM month) AS year, AVG(price) AS mean
            FROM years GROUP BY 1, 2
        )
        SELECT year, mean FROM yearly WHERE project_name = ? ORDER BY year
    """
    with GuardedExecutor(store.db) as guard:
        result = guard.execute(sql, [PROJECT])
    assert [int(r[0]) for r in result.rows] == [2020, 2021]
    assert [float(r[1]) for r in result.rows] == pytest.approx([20_065.0, 21_065.0])


def test_catalog_is_readable_and_future_tables_are_absent(store, clean_cwd) -> None:
    with GuardedExecutor(store.db) as guard:
        result = guard.execute("SELECT table_name FROM foretab_catalog ORDER BY table_name")
        assert guard.allowed_tables == {
            "foretab_catalog",
            HISTORY_2020,
            HISTORY_2021,
            SHANGHAI_2021,
        }
    assert [r[0] for r in result.rows] == [HISTORY_2020, HISTORY_2021, SHANGHAI_2021]
    assert FUTURE_2022 not in {r[0] for r in result.rows}


def test_subqueries_set_operations_and_default_schema(store, clean_cwd) -> None:
    schema = "main" if store.backend == "duckdb" else "public"
    sql = f"""
        SELECT project_name FROM {schema}.{HISTORY_2021}
        WHERE price > (SELECT AVG(price) FROM {HISTORY_2021})
        INTERSECT
        SELECT project_name FROM {HISTORY_2020} WHERE project_name LIKE 'Poly%'
        EXCEPT
        SELECT project_name FROM {SHANGHAI_2021}
    """
    with GuardedExecutor(store.db) as guard:
        result = guard.execute(sql)
    assert result.rows == (("Poly Central Park",),)


def test_join_conditions_may_use_and_and_functions(store, clean_cwd) -> None:
    """``ON a = b AND c = d`` was refused as a table function named ``and``."""
    sql = f"""
        SELECT a.project_name, a.price - b.price AS change
        FROM {HISTORY_2021} a JOIN {HISTORY_2020} b
          ON a.project_name = b.project_name AND EXTRACT(MONTH FROM a.month) = EXTRACT(MONTH FROM b.month)
             AND lower(a.project_name) = lower(b.project_name)
        WHERE a.project_name = ? ORDER BY a.month
    """
    with GuardedExecutor(store.db) as guard:
        result = guard.execute(sql, [PROJECT])
    assert [row[1] for row in result.rows] == [1000.0] * 12


def test_percent_signs_survive_with_parameters(store, clean_cwd) -> None:
    # psycopg reads '%' as a parameter marker; the executor must escape literal ones.
    sql = (
        f"SELECT count(*) FROM {HISTORY_2021} "
        "WHERE project_name LIKE '%Park' AND units_sold % 2 = ? AND project_name <> ?"
    )
    with GuardedExecutor(store.db) as guard:
        result = guard.execute(sql, [0, "nothing"])
    assert result.rows == ((6,),)


def test_bound_parameters_in_an_ast(store, clean_cwd) -> None:
    ast = (
        exp.select("project_name", "price")
        .from_(HISTORY_2021)
        .where(
            exp.and_(
                exp.column("project_name").eq(exp.Placeholder()),
                exp.column("month").between(exp.Placeholder(), exp.Placeholder()),
            )
        )
        .order_by("month")
    )
    params = [PROJECT, dt.date(2021, 3, 1), dt.date(2021, 5, 1)]
    with GuardedExecutor(store.db) as guard:
        result = guard.execute(ast, params)
        # The caller's AST is not modified by the row cap.
        assert ast.args.get("limit") is None
        with pytest.raises(QueryError, match="2 parameter"):
            guard.execute(ast, params[:2])
    assert [r[1] for r in result.rows] == [21_030.0, 21_040.0, 21_050.0]


def test_injection_through_a_parameter_is_just_a_value(store, clean_cwd) -> None:
    before = store.snapshot()
    with GuardedExecutor(store.db) as guard:
        result = guard.execute(
            f"SELECT count(*) FROM {HISTORY_2021} WHERE project_name = ?",
            [f"x'; DROP TABLE {HISTORY_2021}; --"],
        )
    assert result.rows == ((0,),)
    assert store.snapshot() == before


def test_comment_hiding_a_statement_is_dropped(store, clean_cwd) -> None:
    before = store.snapshot()
    with GuardedExecutor(store.db) as guard:
        sql = f"SELECT 1 AS one /* ; DROP TABLE {HISTORY_2021}; */ -- */ DELETE FROM x"
        assert "DROP" not in guard.prepare(sql)
        result = guard.execute(sql)
    assert result.rows == ((1,),)
    assert store.snapshot() == before


@pytest.mark.parametrize(
    ("sql", "expected_limit"),
    [
        (f"SELECT * FROM {HISTORY_2021}", "LIMIT 6"),
        (f"SELECT * FROM {HISTORY_2021} LIMIT 3", "LIMIT 3"),
        (f"SELECT * FROM {HISTORY_2021} LIMIT 500", "LIMIT 6"),
        (f"SELECT price FROM {HISTORY_2020} UNION ALL SELECT price FROM {HISTORY_2021}", "LIMIT 6"),
    ],
)
def test_row_cap_is_added_to_the_outer_query(store, sql, expected_limit) -> None:
    with GuardedExecutor(store.db, max_rows=5) as guard:
        assert guard.prepare(sql).endswith(expected_limit)


def test_truncation_flag(store, clean_cwd) -> None:
    with GuardedExecutor(store.db, max_rows=5) as guard:
        capped = guard.execute(f"SELECT * FROM {HISTORY_2021} ORDER BY month, project_name")
        exact = guard.execute(f"SELECT * FROM {HISTORY_2021} LIMIT 5")
        offset = guard.execute(f"SELECT price FROM {HISTORY_2021} ORDER BY price OFFSET 20")
    assert capped.truncated and len(capped.rows) == 5
    assert capped.rows[0][1] == dt.date(2021, 1, 1)
    assert not exact.truncated and len(exact.rows) == 5
    assert not offset.truncated and len(offset.rows) == 4


def test_timeout_is_configurable(store, clean_cwd) -> None:
    sql = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"
    with GuardedExecutor(store.db, timeout_s=0.5) as guard, pytest.raises(QueryError) as caught:
        guard.execute(sql)
    assert "timed out after 0.5 s" in caught.value.message


def test_failing_query_is_a_query_error(store, clean_cwd) -> None:
    with GuardedExecutor(store.db) as guard, pytest.raises(QueryError) as caught:
        guard.execute(f"SELECT no_such_column FROM {HISTORY_2021}")
    assert "no_such_column" in caught.value.message


def test_explicit_allowed_tables_narrow_the_catalog(store, clean_cwd) -> None:
    with GuardedExecutor(store.db, allowed_tables=[HISTORY_2021]) as guard:
        assert guard.execute(f"SELECT count(*) FROM {HISTORY_2021}").rows == ((24,),)
        with pytest.raises(GuardError) as caught:
            guard.execute(f"SELECT count(*) FROM {HISTORY_2020}")
    assert caught.value.rule == "unknown-table"


def test_run_query_helper(store, clean_cwd) -> None:
    result = run_query(store.db, f"SELECT count(*) FROM {SHANGHAI_2021}")
    assert result.rows == ((1,),)


def test_missing_store_is_a_store_error(tmp_path) -> None:
    with pytest.raises(StoreError, match="foretab ingest"):
        GuardedExecutor(str(tmp_path / "nothing.duckdb"))
    assert not (tmp_path / "nothing.duckdb").exists()


def test_closed_executor_refuses(store) -> None:
    guard = GuardedExecutor(store.db)
    guard.close()
    guard.close()
    with pytest.raises(QueryError, match="closed"):
        guard.execute("SELECT 1")


def test_ast_input_is_checked_with_the_same_rules(store) -> None:
    with GuardedExecutor(store.db) as guard, pytest.raises(GuardError) as caught:
        guard.execute(sqlglot.parse_one(f"SELECT * FROM {FUTURE_2022}"))
    assert caught.value.rule == "unknown-table"


@pytest.mark.parametrize("backend", ["duckdb", "postgresql"])
def test_snapshot_notices_a_change(request, tmp_path, backend) -> None:
    """The 'store unchanged' checks of the hostile suite can fail."""
    from sql_stores import build_store

    if backend == "duckdb":
        built = build_store("duckdb", tmp_path, None)
        before = built.snapshot()
        import duckdb

        with duckdb.connect(built.db) as conn:
            conn.execute(
                f"UPDATE {HISTORY_2021} SET price = price + 1 WHERE month = DATE '2021-01-01'"
            )
    else:
        import psycopg

        server = request.getfixturevalue("pg_server")
        name = server.fresh_dbname("snap")
        built = build_store("postgresql", tmp_path, server.url(name))
        before = built.snapshot()
        from sql_stores import pg_admin

        with pg_admin(built.location.future, built.location.history) as conn:
            conn.execute(f"UPDATE {FUTURE_2022} SET price = price + 1")
    try:
        assert built.snapshot() != before
    finally:
        if backend == "postgresql":
            from sql_stores import close_snapshot_connections

            close_snapshot_connections()
            with psycopg.connect(server.url("postgres"), autocommit=True) as conn:
                for db in (name, f"{name}_future"):
                    conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')


def test_accepts_a_location_or_an_open_store(store, clean_cwd) -> None:
    from foretab.store import open_history

    with GuardedExecutor(store.location) as guard:
        assert guard.execute(f"SELECT count(*) FROM {HISTORY_2021}").rows == ((24,),)
    history = open_history(store.db)
    try:
        with GuardedExecutor(history) as guard:
            assert guard.execute(f"SELECT count(*) FROM {HISTORY_2020}").rows == ((24,),)
    finally:
        history.close()


ANALYST_QUERIES = [
    "SELECT date_trunc('year', month) AS y, max(price) - min(price) AS spread FROM {t} GROUP BY 1",
    "SELECT project_name, price, lag(price) OVER (PARTITION BY project_name ORDER BY month) "
    "AS previous FROM {t}",
    "SELECT rank() OVER (ORDER BY price DESC) AS r, upper(project_name), length(project_name) "
    "FROM {t}",
    "SELECT EXTRACT(MONTH FROM month) AS m, coalesce(units_sold, 0) AS u, "
    "CASE WHEN price > 20000 THEN 'high' ELSE 'low' END AS band FROM {t}",
    "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY price) AS median_price FROM {t}",
    "SELECT stddev_samp(price), count(DISTINCT project_name), "
    "sum(units_sold) FILTER (WHERE price > 0) FROM {t}",
    "SELECT project_name FROM {t} WHERE lower(project_name) LIKE '%park%' AND abs(price) > 0 "
    "AND month BETWEEN DATE '2021-01-01' AND DATE '2021-06-01'",
    "SELECT greatest(price, 0), least(price, 1e9), floor(price), ceil(price), sqrt(price), "
    "ln(price), nullif(units_sold, 0), CAST(price AS INTEGER) FROM {t}",
    "SELECT string_agg(DISTINCT project_name, ',') AS names FROM {t}",
    "SELECT project_name, first_value(price) OVER w, row_number() OVER w FROM {t} "
    "WINDOW w AS (PARTITION BY project_name ORDER BY month)",
    "SELECT replace(project_name, ' ', '_'), substring(project_name, 1, 4), trim(project_name) "
    "FROM {t} WHERE EXISTS (SELECT 1 FROM foretab_catalog WHERE year = 2021)",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 12) SELECT n FROM r",
]


@pytest.mark.parametrize("template", ANALYST_QUERIES)
def test_analyst_functions_are_allowed(store, clean_cwd, template: str) -> None:
    with GuardedExecutor(store.db) as guard:
        result = guard.execute(template.format(t=HISTORY_2021))
    assert result.rows


def test_every_allowlisted_function_class_exists_in_sqlglot() -> None:
    from foretab.sql.rules import ALLOWED_FUNCTION_CLASSES

    missing = sorted(n for n in ALLOWED_FUNCTION_CLASSES if not hasattr(exp, n))
    assert missing == []
    assert all(issubclass(getattr(exp, n), exp.Func) for n in ALLOWED_FUNCTION_CLASSES)
