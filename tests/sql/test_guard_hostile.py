"""Hostile statements are refused (or stopped) on DuckDB and PostgreSQL, changing nothing.

Each case names the rule it must break. Placeholders: ``{t}`` a history table, ``{T}`` the
same upper-cased, ``{f}`` a future-store table, ``{fut}`` the future store (DuckDB file
path or PostgreSQL database name), ``{hist}`` the history store itself.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sql_stores import FUTURE_2022, HISTORY_2021

from foretab.errors import GuardError, QueryError
from foretab.sql.guard import GuardedExecutor
from foretab.sql.rules import RULES

# (id, statement, rule on DuckDB, rule on PostgreSQL when sqlglot's dialect differs)
HOSTILE: list[tuple[str, str, str, str | None]] = [
    # -- more than one statement, comment and quoting tricks
    ("two-selects", "SELECT 1; SELECT 2", "single-statement", None),
    ("select-then-drop", "SELECT * FROM {t}; DROP TABLE {t}", "single-statement", None),
    (
        "line-comment-hides-nothing",
        "SELECT * FROM {t} -- harmless?\n; DELETE FROM {t}",
        "single-statement",
        None,
    ),
    (
        "block-comment-then-delete",
        "SELECT 1 /* ; */ ; DELETE FROM {t} /* */",
        "single-statement",
        None,
    ),
    ("trailing-update", "SELECT 1;\nUPDATE {t} SET price = 0", "single-statement", None),
    ("statement-in-quoted-name", 'SELECT * FROM "{t}; DROP TABLE {t}"', "unknown-table", None),
    ("empty", "   ;  ", "parse-error", None),
    ("garbage", "SELEC * FROM {t}", "parse-error", None),
    # -- DDL / DML / not a query
    ("drop", "DROP TABLE {t}", "read-only", None),
    ("delete", "DELETE FROM {t}", "read-only", None),
    ("delete-case-trick", "dElEtE fRoM {T}", "read-only", None),
    ("update", "UPDATE {t} SET price = 0", "read-only", None),
    ("insert", "INSERT INTO {t} VALUES ('x', DATE '2021-01-01', 1.0, 1)", "read-only", None),
    ("create-table-as", "CREATE TABLE evil AS SELECT * FROM {t}", "read-only", None),
    ("create-macro", "CREATE MACRO evil() AS 1", "read-only", None),
    ("alter", "ALTER TABLE {t} RENAME TO evil", "read-only", None),
    ("truncate", "TRUNCATE {t}", "read-only", None),
    ("grant", "GRANT ALL ON {t} TO PUBLIC", "read-only", None),
    ("select-into", "SELECT * INTO evil FROM {t}", "read-only", None),
    ("for-update", "SELECT * FROM {t} FOR UPDATE", "read-only", None),
    ("for-share", "SELECT * FROM {t} FOR SHARE", "read-only", None),
    (
        "data-modifying-cte",
        "WITH d AS (DELETE FROM {t} RETURNING *) SELECT * FROM d",
        "read-only",
        None,
    ),
    ("explain-analyze-delete", "EXPLAIN ANALYZE DELETE FROM {t}", "read-only", None),
    ("describe", "DESCRIBE {t}", "read-only", None),
    ("show-tables", "SHOW TABLES", "read-only", None),
    ("values", "VALUES (1)", "read-only", None),
    ("do-block", "DO $$ BEGIN DELETE FROM {t}; END $$", "parse-error", "read-only"),
    ("prepare", "PREPARE p AS DELETE FROM {t}", "read-only", None),
    ("create-temp-table", "CREATE TEMP TABLE evil AS SELECT 1", "read-only", None),
    ("create-view", "CREATE VIEW evil AS SELECT * FROM {t}", "read-only", None),
    ("merge", "MERGE INTO {t} USING {t} s ON true WHEN MATCHED THEN DELETE", "read-only", None),
    ("update-from", "UPDATE {t} SET price = 1 FROM {t} s", "read-only", None),
    ("only-a-comment", "/* SELECT 1 */ -- nothing", "parse-error", None),
    ("backslash-quote-trick", "SELECT '\\'; DROP TABLE {t}; --'", "single-statement", None),
    ("declare-cursor", "DECLARE c CURSOR FOR SELECT * FROM {t}", "parse-error", "read-only"),
    # -- engine commands: attach, copy, pragma, settings, extensions, transactions
    ("attach-future", "ATTACH '{fut}' AS fut", "read-only", "parse-error"),
    ("attach-future-readonly", "ATTACH '{fut}' AS fut (READ_ONLY)", "read-only", "parse-error"),
    ("detach", "DETACH fut", "read-only", None),
    ("use", "USE fut", "read-only", None),
    ("copy-to-file", "COPY {t} TO 'out.csv'", "read-only", None),
    (
        "copy-query-to-parquet",
        "COPY (SELECT * FROM {t}) TO 'out.parquet' (FORMAT PARQUET)",
        "read-only",
        None,
    ),
    ("copy-from-file", "COPY {t} FROM '/etc/passwd'", "read-only", None),
    ("export-database", "EXPORT DATABASE 'dump'", "parse-error", None),
    ("import-database", "IMPORT DATABASE 'dump'", "parse-error", None),
    ("pragma", "PRAGMA database_list", "read-only", None),
    ("set", "SET enable_external_access = true", "read-only", None),
    ("set-statement-timeout", "SET statement_timeout = 0", "read-only", None),
    ("set-role", "SET ROLE postgres", "read-only", None),
    ("reset", "RESET ALL", "read-only", None),
    ("install", "INSTALL httpfs", "read-only", None),
    ("load", "LOAD httpfs", "read-only", None),
    ("call", "CALL pragma_version()", "read-only", None),
    ("vacuum", "VACUUM", "read-only", None),
    ("checkpoint", "CHECKPOINT", "read-only", None),
    ("begin", "BEGIN TRANSACTION", "read-only", None),
    ("commit", "COMMIT", "read-only", None),
    ("rollback", "ROLLBACK", "read-only", None),
    ("create-secret", "CREATE SECRET s (TYPE S3, KEY_ID 'x', SECRET 'y')", "read-only", None),
    ("set-variable", "SET VARIABLE x = 1", "read-only", None),
    ("alter-system", "ALTER SYSTEM SET work_mem = '1GB'", "read-only", None),
    ("create-extension", "CREATE EXTENSION dblink", "read-only", None),
    ("load-shared-object", "LOAD 'evil.so'", "read-only", None),
    ("call-dbgen", "CALL dbgen(sf = 1)", "read-only", None),
    ("force-checkpoint", "FORCE CHECKPOINT", "read-only", None),
    ("show-all", "SHOW ALL", "parse-error", "read-only"),
    # -- table functions and files as tables
    ("read-csv", "SELECT * FROM read_csv('/etc/passwd')", "table-function", None),
    ("read-csv-case-trick", "sElEcT * fRoM ReAd_CsV('/etc/passwd')", "table-function", None),
    ("read-parquet", "SELECT * FROM read_parquet('x.parquet')", "table-function", None),
    ("glob", "SELECT * FROM glob('*')", "table-function", "parse-error"),
    ("query-fn", "SELECT * FROM query('SELECT * FROM {f}')", "table-function", None),
    (
        "generate-series-table",
        "SELECT * FROM generate_series(1, 1000000000)",
        "table-function",
        None,
    ),
    ("range-table", "SELECT * FROM range(1000000000)", "table-function", None),
    ("unnest-table", "SELECT * FROM unnest(ARRAY[1, 2, 3])", "table-function", None),
    ("duckdb-settings", "SELECT * FROM duckdb_settings()", "table-function", None),
    (
        "duckdb-databases-join",
        "SELECT * FROM {t} x JOIN duckdb_databases() d ON true",
        "table-function",
        None,
    ),
    (
        "dblink",
        "SELECT * FROM dblink('dbname={fut}', 'SELECT * FROM {f}') AS x(a text)",
        "table-function",
        None,
    ),
    (
        "lateral-function",
        "SELECT * FROM {t} AS x, LATERAL read_csv('x.csv')",
        "table-function",
        None,
    ),
    (
        "subquery-table-function",
        "SELECT * FROM {t} WHERE EXISTS (SELECT 1 FROM read_text('x'))",
        "table-function",
        None,
    ),
    (
        "union-table-function",
        "SELECT project_name FROM {t} UNION ALL SELECT * FROM read_csv('x')",
        "table-function",
        None,
    ),
    ("pragma-table-info", "SELECT * FROM pragma_table_info('{t}')", "table-function", None),
    ("duckdb-secrets", "SELECT * FROM duckdb_secrets()", "table-function", None),
    (
        "lateral-generate-series",
        "SELECT * FROM {t} CROSS JOIN LATERAL generate_series(1, 10) g",
        "table-function",
        None,
    ),
    ("s3-url-as-table", "SELECT * FROM 's3://bucket/x.parquet'", "file-path", None),
    ("string-path-as-table", "SELECT * FROM '/etc/passwd'", "file-path", None),
    ("future-file-as-table", "SELECT * FROM '{fut}'", "file-path", "unknown-table"),
    ("future-file-quoted-ident", 'SELECT * FROM "{fut}"', "file-path", "unknown-table"),
    ("csv-name-as-table", 'SELECT * FROM "prices.csv"', "file-path", None),
    ("url-as-table", "SELECT * FROM 'https://example.com/x.parquet'", "file-path", None),
    # -- dangerous scalar functions
    ("read-text", "SELECT read_text('/etc/passwd')", "forbidden-function", None),
    ("read-blob", "SELECT read_blob('{fut}')", "forbidden-function", None),
    ("getenv", "SELECT getenv('HOME')", "forbidden-function", None),
    ("current-setting", "SELECT current_setting('statement_timeout')", "forbidden-function", None),
    (
        "set-config",
        "SELECT set_config('statement_timeout', '0', false)",
        "forbidden-function",
        None,
    ),
    ("pg-read-file", "SELECT pg_read_file('/etc/passwd')", "forbidden-function", None),
    ("pg-read-file-quoted", "SELECT \"pg_read_file\"('/etc/passwd')", "forbidden-function", None),
    (
        "pg-read-file-qualified",
        "SELECT pg_catalog.pg_read_file('/etc/passwd')",
        "forbidden-function",
        None,
    ),
    ("pg-ls-dir", "SELECT pg_ls_dir('.')", "forbidden-function", None),
    ("lo-import", "SELECT lo_import('/etc/passwd')", "forbidden-function", None),
    ("lo-export", "SELECT lo_export(1, '/tmp/evil')", "forbidden-function", None),
    ("pg-sleep", "SELECT pg_sleep(30)", "forbidden-function", None),
    ("sleep-in-where", "SELECT * FROM {t} WHERE pg_sleep(1) IS NULL", "forbidden-function", None),
    (
        "query-to-xml",
        "SELECT query_to_xml('SELECT * FROM {f}', true, true, '')",
        "forbidden-function",
        None,
    ),
    ("nextval", "SELECT nextval('s')", "forbidden-function", None),
    (
        "terminate-backend",
        "SELECT pg_terminate_backend(pg_backend_pid())",
        "forbidden-function",
        None,
    ),
    ("serialized-sql", "SELECT json_execute_serialized_sql('{{}}')", "forbidden-function", None),
    ("getvariable", "SELECT getvariable('x')", "forbidden-function", None),
    ("txid-current", "SELECT txid_current()", "forbidden-function", None),
    ("advisory-lock", "SELECT pg_advisory_lock(1)", "forbidden-function", None),
    ("reload-conf", "SELECT pg_reload_conf()", "forbidden-function", None),
    ("sleep-in-scalar-subquery", "SELECT (SELECT pg_sleep(5))", "forbidden-function", None),
    # -- names outside the store: system catalogs, the future store, non-catalog tables
    ("information-schema", "SELECT * FROM information_schema.tables", "qualified-name", None),
    (
        "information-schema-case",
        'SELECT * FROM "Information_Schema"."Tables"',
        "qualified-name",
        None,
    ),
    ("pg-catalog", "SELECT * FROM pg_catalog.pg_user", "qualified-name", None),
    ("future-by-catalog-name", "SELECT * FROM fut.main.{f}", "qualified-name", None),
    ("future-by-database-name", "SELECT * FROM corpus_future.public.{f}", "qualified-name", None),
    ("system-schema", "SELECT * FROM system.main.duckdb_settings", "qualified-name", None),
    ("temp-schema", "SELECT * FROM temp.{t}", "qualified-name", None),
    ("history-by-catalog-name", "SELECT * FROM corpus.main.{t}", "qualified-name", None),
    ("pg-shadow", "SELECT usename, passwd FROM pg_shadow", "unknown-table", None),
    ("pg-stat-activity", "SELECT * FROM pg_stat_activity", "unknown-table", None),
    ("meta-in-default-schema", "SELECT * FROM main.foretab_meta", "unknown-table", None),
    ("table-statement-meta", "TABLE foretab_meta", "unknown-table", None),
    ("future-table-by-name", "SELECT * FROM {f}", "unknown-table", None),
    ("future-table-in-subquery", "SELECT (SELECT count(*) FROM {f}) AS n", "unknown-table", None),
    (
        "future-table-in-union",
        "SELECT * FROM {t} UNION ALL SELECT * FROM {f}",
        "unknown-table",
        None,
    ),
    ("duckdb-view", "SELECT * FROM duckdb_tables", "unknown-table", None),
    ("sqlite-master", "SELECT * FROM sqlite_master", "unknown-table", None),
    ("pg-user-unqualified", "SELECT * FROM pg_user", "unknown-table", None),
    ("meta-not-in-catalog", "SELECT * FROM foretab_meta", "unknown-table", None),
    (
        "cte-forward-reference",
        "WITH a AS (SELECT * FROM pg_user), pg_user AS (SELECT 1) SELECT * FROM a",
        "cte-name",
        None,
    ),
    # -- CTE scoping under WITH RECURSIVE (DuckDB resolves these names to real relations)
    (
        "recursive-cte-shadows-meta",
        "WITH RECURSIVE foretab_meta AS (SELECT * FROM foretab_meta) SELECT * FROM foretab_meta",
        "cte-name",
        None,
    ),
    (
        "recursive-cte-shadows-projects",
        "WITH RECURSIVE foretab_projects AS (SELECT * FROM foretab_projects) "
        "SELECT * FROM foretab_projects",
        "cte-name",
        None,
    ),
    (
        "recursive-cte-shadows-duckdb-databases",
        "WITH RECURSIVE duckdb_databases AS (SELECT * FROM duckdb_databases) "
        "SELECT * FROM duckdb_databases",
        "cte-name",
        None,
    ),
    (
        "recursive-cte-shadows-pg-settings",
        "WITH RECURSIVE pg_settings AS (SELECT * FROM pg_settings) SELECT * FROM pg_settings",
        "cte-name",
        None,
    ),
    (
        "recursive-cte-shadows-sqlite-master",
        "WITH RECURSIVE sqlite_master AS (SELECT * FROM sqlite_master) SELECT * FROM sqlite_master",
        "cte-name",
        None,
    ),
    (
        "recursive-cte-shadows-upper-case",
        'WITH RECURSIVE "FORETAB_META" AS (SELECT * FROM "FORETAB_META") SELECT * FROM "FORETAB_META"',
        "cte-name",
        None,
    ),
    (
        "recursive-cte-shadows-information-schema-view",
        "WITH RECURSIVE schemata AS (SELECT * FROM schemata) SELECT * FROM schemata",
        "cte-name",
        None,
    ),
    (
        "recursive-cte-shadows-catalog-table",
        "WITH RECURSIVE {t} AS (SELECT * FROM {t}) SELECT * FROM {t}",
        "cte-name",
        None,
    ),
    (
        "recursive-forward-reference",
        "WITH RECURSIVE a AS (SELECT * FROM zz), zz AS (SELECT 1 AS x) SELECT * FROM a",
        "unknown-table",
        None,
    ),
    (
        "recursive-self-reference-without-union",
        "WITH RECURSIVE zz AS (SELECT * FROM zz) SELECT * FROM zz",
        "unknown-table",
        None,
    ),
    (
        "recursive-self-reference-in-anchor",
        "WITH RECURSIVE zz(n) AS (SELECT n FROM zz UNION ALL SELECT 1) SELECT * FROM zz",
        "unknown-table",
        None,
    ),
    (
        "recursive-cte-in-subquery-shadows",
        "SELECT * FROM {t} WHERE EXISTS (WITH RECURSIVE duckdb_settings AS "
        "(SELECT * FROM duckdb_settings) SELECT 1 FROM duckdb_settings)",
        "cte-name",
        None,
    ),
    # -- functions outside the allowlist (SQL in a string, settings, memory bombs)
    (
        "json-serialize-plan",
        "SELECT json_serialize_plan('SELECT * FROM foretab_meta', optimize := true)",
        "forbidden-function",
        None,
    ),
    (
        "json-serialize-plan-plain",
        "SELECT json_serialize_plan('SELECT * FROM foretab_meta')",
        "forbidden-function",
        None,
    ),
    (
        "json-serialize-plan-quoted",
        "SELECT \"json_serialize_plan\"('SELECT * FROM foretab_meta')",
        "forbidden-function",
        None,
    ),
    ("json-serialize-sql", "SELECT json_serialize_sql('SELECT 1')", "forbidden-function", None),
    (
        "json-deserialize-sql",
        "SELECT json_deserialize_sql(json_serialize_sql('SELECT 1'))",
        "forbidden-function",
        None,
    ),
    ("repeat-bomb", "SELECT repeat('x', 2000000000)", "forbidden-function", None),
    (
        "list-transform-bomb",
        "SELECT list_transform(range(30000000), x -> x + 1)",
        "forbidden-function",
        None,
    ),
    ("range-scalar", "SELECT range(10)", "forbidden-function", None),
    ("current-database", "SELECT current_database()", "forbidden-function", None),
    ("version", "SELECT version()", "forbidden-function", None),
    ("current-query", "SELECT current_query()", "forbidden-function", None),
    ("pg-typeof", "SELECT pg_typeof(1)", "forbidden-function", None),
    ("format-width-bomb", "SELECT format('{{:>999999999}}', 1)", "forbidden-function", None),
    ("printf-width-bomb", "SELECT printf('%999999999d', 1)", "forbidden-function", None),
    ("array-agg", "SELECT array_agg(project_name) FROM {t}", "forbidden-function", None),
    ("string-to-array", "SELECT string_to_array('a,b', ',')", "forbidden-function", None),
    ("struct-pack", "SELECT struct_pack(a := 1)", "forbidden-function", None),
    ("md5-in-where", "SELECT * FROM {t} WHERE md5(project_name) = 'x'", "forbidden-function", None),
    ("setseed", "SELECT setseed(0.5)", "forbidden-function", None),
    ("error-fn", "SELECT error('boom')", "forbidden-function", None),
    ("uuid", "SELECT gen_random_uuid()", "forbidden-function", None),
    (
        "cte-out-of-scope",
        "SELECT * FROM (WITH x AS (SELECT 1) SELECT * FROM x) s, x",
        "unknown-table",
        None,
    ),
    # -- forecast() where no model is loaded (a bare GuardedExecutor)
    ("forecast-without-model", "SELECT * FROM forecast('{t}')", "forecast-unavailable", None),
    (
        "forecast-future-without-model",
        "SELECT * FROM forecast('{f}')",
        "forecast-unavailable",
        None,
    ),
]

# Attacks on forecast(...) itself, run by an executor that can forecast (docs/design.md §10).
FORECAST_HOSTILE: list[tuple[str, str, str, str | None]] = [
    # -- the table argument: only a catalog history table, named by a string literal
    ("future-table", "SELECT * FROM forecast('{f}')", "forecast-table", None),
    ("future-table-upper", "SELECT * FROM FORECAST('{F}')", "forecast-table", None),
    ("future-table-quoted-fn", "SELECT * FROM \"forecast\"('{f}')", "forecast-table", None),
    ("future-store-path", "SELECT * FROM forecast('{fut}')", "forecast-table", None),
    ("history-store-path", "SELECT * FROM forecast('{hist}')", "forecast-table", None),
    ("file-path", "SELECT * FROM forecast('/etc/passwd')", "forecast-table", None),
    ("catalog-table", "SELECT * FROM forecast('foretab_catalog')", "forecast-table", None),
    ("meta-table", "SELECT * FROM forecast('foretab_meta')", "forecast-table", None),
    ("system-table", "SELECT * FROM forecast('pg_settings')", "forecast-table", None),
    ("unknown-table", "SELECT * FROM forecast('no_such_table')", "forecast-table", None),
    ("qualified-name", "SELECT * FROM forecast('main.{t}')", "forecast-table", None),
    ("identifier-not-string", "SELECT * FROM forecast({t})", "forecast-table", None),
    ("no-arguments", "SELECT * FROM forecast()", "forecast-table", None),
    ("only-options", "SELECT * FROM forecast(horizon => 3)", "forecast-table", None),
    (
        "cte-as-table",
        "WITH c AS (SELECT * FROM {t}) SELECT * FROM forecast('c')",
        "forecast-table",
        None,
    ),
    ("concatenated-name", "SELECT * FROM forecast('{t}' || '')", "forecast-table", None),
    (
        "subquery-name",
        "SELECT * FROM forecast((SELECT max(table_name) FROM foretab_catalog))",
        "forecast-table",
        None,
    ),
    (
        "lateral-column-name",
        "SELECT * FROM {t} a, LATERAL forecast(a.project_name)",
        "forecast-position",
        None,
    ),
    # -- nesting
    ("nested-call", "SELECT * FROM forecast(forecast('{t}'))", "forecast-nesting", None),
    (
        "nested-in-option",
        "SELECT * FROM forecast('{t}', horizon => (SELECT count(*) FROM forecast('{t}')))",
        "forecast-nesting",
        None,
    ),
    # -- options: literals only, in range, once each
    ("huge-horizon", "SELECT * FROM forecast('{t}', horizon => 100000)", "forecast-option", None),
    ("past-store-horizon", "SELECT * FROM forecast('{t}', horizon => 13)", "forecast-option", None),
    (
        "bigint-horizon",
        "SELECT * FROM forecast('{t}', horizon => 99999999999999999999999999)",
        "forecast-option",
        None,
    ),
    ("zero-horizon", "SELECT * FROM forecast('{t}', horizon => 0)", "forecast-option", None),
    ("negative-horizon", "SELECT * FROM forecast('{t}', horizon => -1)", "forecast-option", None),
    ("fraction-horizon", "SELECT * FROM forecast('{t}', horizon => 2.5)", "forecast-option", None),
    ("string-horizon", "SELECT * FROM forecast('{t}', horizon => '12')", "forecast-option", None),
    (
        "subquery-horizon",
        "SELECT * FROM forecast('{t}', horizon => (SELECT 12))",
        "forecast-option",
        None,
    ),
    (
        "expression-horizon",
        "SELECT * FROM forecast('{t}', horizon => 6 + 6)",
        "forecast-option",
        None,
    ),
    ("column-horizon", "SELECT * FROM forecast('{t}', horizon => price)", "forecast-option", None),
    ("placeholder-horizon", "SELECT * FROM forecast('{t}', horizon => ?)", "forecast-option", None),
    ("level-one", "SELECT * FROM forecast('{t}', level => 1)", "forecast-option", None),
    ("level-tiny", "SELECT * FROM forecast('{t}', level => 0.01)", "forecast-option", None),
    (
        "level-expression",
        "SELECT * FROM forecast('{t}', level => 0.4 + 0.4)",
        "forecast-option",
        None,
    ),
    ("unknown-option", "SELECT * FROM forecast('{t}', future => true)", "forecast-option", None),
    ("db-option", "SELECT * FROM forecast('{t}', db => '{fut}')", "forecast-option", None),
    (
        "duplicate-option",
        "SELECT * FROM forecast('{t}', horizon => 3, horizon => 4)",
        "forecast-option",
        None,
    ),
    ("positional-option", "SELECT * FROM forecast('{t}', 12)", "forecast-option", None),
    ("second-table", "SELECT * FROM forecast('{t}', '{f}')", "forecast-option", None),
    (
        "entities-subquery",
        "SELECT * FROM forecast('{t}', entities => (SELECT project_name FROM {t}))",
        "forecast-option",
        None,
    ),
    ("entities-string", "SELECT * FROM forecast('{t}', entities => 'x')", "forecast-option", None),
    (
        "entities-column",
        "SELECT * FROM forecast('{t}', entities => [project_name])",
        "forecast-option",
        None,
    ),
    # -- where it may appear: a relation in FROM / JOIN, a few per statement, never in DML
    ("in-select-list", "SELECT forecast('{t}')", "forecast-position", None),
    ("in-where", "SELECT * FROM {t} WHERE price > forecast('{t}')", "forecast-position", None),
    ("schema-qualified-call", "SELECT * FROM main.forecast('{t}')", "forecast-position", None),
    (
        "too-many-calls",
        "SELECT * FROM forecast('{t}') a, forecast('{t}') b, forecast('{t}') c, "
        "forecast('{t}') d, forecast('{t}') e",
        "forecast-position",
        None,
    ),
    ("in-insert", "INSERT INTO {t} SELECT * FROM forecast('{t}')", "read-only", None),
    ("in-create-table", "CREATE TABLE evil AS SELECT * FROM forecast('{t}')", "read-only", None),
    ("in-delete-using", "DELETE FROM {t} USING forecast('{t}') f", "read-only", None),
    (
        "with-data-modifying-cte",
        "WITH d AS (DELETE FROM {t} RETURNING *) SELECT * FROM forecast('{t}')",
        "read-only",
        None,
    ),
    ("then-drop", "SELECT * FROM forecast('{t}'); DROP TABLE {t}", "single-statement", None),
    # -- the stand-in relation the guard substitutes cannot be named or shadowed
    ("stand-in-name", "SELECT * FROM foretab_forecast_1", "unknown-table", None),
    (
        "stand-in-cte",
        "WITH foretab_forecast_1 AS (SELECT 1) SELECT * FROM forecast('{t}')",
        "cte-name",
        None,
    ),
    (
        "stand-in-beside-call",
        "SELECT * FROM forecast('{t}') a JOIN foretab_forecast_1 b ON true",
        "unknown-table",
        None,
    ),
    # -- a forecast call does not let anything else through
    (
        "forbidden-function-beside",
        "SELECT read_text('/etc/passwd') FROM forecast('{t}')",
        "forbidden-function",
        None,
    ),
    (
        "future-table-joined",
        "SELECT * FROM forecast('{t}') f JOIN {f} x ON true",
        "unknown-table",
        None,
    ),
]


def _fill(template: str, store) -> str:
    return template.format(
        t=HISTORY_2021,
        T=HISTORY_2021.upper(),
        f=FUTURE_2022,
        F=FUTURE_2022.upper(),
        fut=store.future_ref,
        hist=store.db,
    )


def as_params(cases: list[tuple[str, str, str, str | None]]) -> list[Any]:
    """``(statement, duck_rule, pg_rule)`` parameters named by each case's name."""
    return [pytest.param(s, d, p, id=name) for name, s, d, p in cases]


def expected_rule(store, duck_rule: str, pg_rule: str | None) -> str:
    """The rule a case is refused by on ``store``'s backend."""
    return pg_rule if (store.backend == "postgresql" and pg_rule) else duck_rule


def refusal(guard: GuardedExecutor, statement: str, store) -> GuardError:
    """The refusal ``guard`` gives the case's ``statement`` (it must refuse it)."""
    with pytest.raises(GuardError) as caught:
        guard.execute(_fill(statement, store))
    return caught.value


def test_at_least_forty_cases_with_known_rules() -> None:
    assert len(HOSTILE) >= 40
    assert len({case[0] for case in HOSTILE}) == len(HOSTILE)
    for _, _, duck_rule, pg_rule in HOSTILE:
        assert duck_rule in RULES
        assert pg_rule is None or pg_rule in RULES


@pytest.fixture(scope="module")
def refusing_guard(store, tmp_path_factory) -> Iterator[tuple[GuardedExecutor, Path]]:
    """One executor per backend for every refusal case, its worker started in a folder that
    must stay empty.

    Sharing it is the stronger check (every refusal must leave the executor usable for the
    next hostile statement, not just for one follow-up), and it saves a worker start per case
    (about 0.2 s each, ~290 cases).
    """
    folder = tmp_path_factory.mktemp(f"guard-cwd-{store.backend}")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        with GuardedExecutor(store.db, timeout_s=2.0) as guard:
            yield guard, folder


@pytest.mark.parametrize(("statement", "duck_rule", "pg_rule"), as_params(HOSTILE))
def test_hostile_statement_is_refused(
    store, refusing_guard, clean_cwd, statement, duck_rule, pg_rule
) -> None:
    guard, worker_cwd = refusing_guard
    expected = expected_rule(store, duck_rule, pg_rule)
    before = store.snapshot()
    refused = refusal(guard, statement, store)
    # The executor still works after a refusal.
    assert guard.execute("SELECT count(*) AS n FROM foretab_catalog").rows[0][0] == 3
    assert refused.rule == expected, refused.message
    assert expected in refused.message
    assert store.snapshot() == before
    assert os.listdir(worker_cwd) == [], "a statement wrote a file into the worker's folder"


def test_forecast_cases_have_known_rules() -> None:
    assert len(FORECAST_HOSTILE) >= 40
    assert len({case[0] for case in FORECAST_HOSTILE}) == len(FORECAST_HOSTILE)
    for _, _, duck_rule, pg_rule in FORECAST_HOSTILE:
        assert duck_rule in RULES
        assert pg_rule is None or pg_rule in RULES


@pytest.fixture(scope="module")
def forecasting_guard(store, tmp_path_factory) -> Iterator[tuple[GuardedExecutor, Path]]:
    """An executor that can forecast (no model is saved with this store: every case must be
    refused before one would be loaded)."""
    from foretab.sql.forecast_rows import StoreForecasts
    from foretab.store import open_history

    folder = tmp_path_factory.mktemp(f"forecast-cwd-{store.backend}")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        with open_history(store.db) as history:
            provider = StoreForecasts(history)
            with GuardedExecutor(history, timeout_s=2.0, forecasts=provider) as guard:
                yield guard, folder


@pytest.mark.parametrize(("statement", "duck_rule", "pg_rule"), as_params(FORECAST_HOSTILE))
def test_hostile_forecast_call_is_refused(
    store, forecasting_guard, clean_cwd, statement, duck_rule, pg_rule
) -> None:
    guard, worker_cwd = forecasting_guard
    expected = expected_rule(store, duck_rule, pg_rule)
    before = store.snapshot()
    refused = refusal(guard, statement, store)
    assert guard.execute("SELECT count(*) AS n FROM foretab_catalog").rows[0][0] == 3
    assert refused.rule == expected, refused.message
    assert expected in refused.message
    assert store.snapshot() == before
    assert os.listdir(worker_cwd) == [], "a statement wrote a file into the worker's folder"


def test_hostile_ast_is_refused_too(store, clean_cwd) -> None:
    import sqlglot

    ast = sqlglot.parse_one(f"DELETE FROM {HISTORY_2021}")
    before = store.snapshot()
    with GuardedExecutor(store.db) as guard, pytest.raises(GuardError) as caught:
        guard.execute(ast)
    assert caught.value.rule == "read-only"
    assert store.snapshot() == before


RUNAWAY = [
    pytest.param(
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
        id="endless-recursive-cte",
    ),
    pytest.param(
        "SELECT count(*) FROM {t} a, {t} b, {t} c, {t} d, {t} e, {t} f, {t} g, {t} h, {t} i",
        id="huge-cross-join",
    ),
    pytest.param(
        "SELECT max(a.price + b.price + c.price + d.price + e.price + f.price + g.price + h.price) "
        "FROM {t} a, {t} b, {t} c, {t} d, {t} e, {t} f, {t} g, {t} h "
        "WHERE a.project_name || b.project_name LIKE '%a%'",
        id="cross-join-with-filter",
    ),
]


@pytest.mark.parametrize("statement", RUNAWAY)
def test_runaway_query_is_interrupted(store, clean_cwd, statement) -> None:
    before = store.snapshot()
    # A runaway never ends, so any limit shows the interrupt; a short one keeps the six
    # cases from waiting out a second each.
    timeout = 0.5
    with GuardedExecutor(store.db, timeout_s=timeout) as guard:
        started = time.perf_counter()
        with pytest.raises(QueryError) as caught:
            guard.execute(_fill(statement, store))
        waited = time.perf_counter() - started
        # Interrupted, not waited out; and the connection is usable afterwards.
        assert guard.execute(f"SELECT count(*) FROM {HISTORY_2021}").rows == ((24,),)
    assert "timed out after 0.5 s" in caught.value.message
    assert "--timeout" in caught.value.message
    assert waited < timeout + 3.0
    assert store.snapshot() == before


def test_huge_result_is_truncated(store, clean_cwd) -> None:
    before = store.snapshot()
    with GuardedExecutor(store.db) as guard:
        # 24^3 = 13,824 rows > the default 10,000 cap.
        result = guard.execute(
            f"SELECT a.price FROM {HISTORY_2021} a, {HISTORY_2021} b, {HISTORY_2021} c"
        )
        endless = guard.execute(
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r"
        )
    assert result.truncated
    assert len(result.rows) == 10_000
    assert endless.truncated
    assert len(endless.rows) == 10_000
    assert store.snapshot() == before


def test_deeply_nested_statement_is_refused(store, clean_cwd) -> None:
    statement = "SELECT " + "(" * 5000 + "1" + ")" * 5000
    with GuardedExecutor(store.db) as guard, pytest.raises(GuardError) as caught:
        guard.execute(statement)
    assert caught.value.rule == "parse-error"
