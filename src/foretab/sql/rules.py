"""The guard's rules, checked on the sqlglot AST before anything reaches a database.

Only a single read-only query (SELECT, set operations, CTEs, subqueries) over an allowed
set of tables passes. Each refusal raises ``GuardError(rule, message)`` with one of the
stable rule ids in ``RULES``. The connection enforces read-only access as well (see
``foretab.sql.connect``); these rules are the first line, the database the second.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from foretab.errors import GuardError

RULES: dict[str, str] = {
    "parse-error": "the statement must be valid SQL that sqlglot can parse",
    "single-statement": "exactly one statement per call",
    "read-only": "only a SELECT query (no DDL/DML, SET, PRAGMA, ATTACH, COPY, INTO, locks…)",
    "table-function": "no table functions (read_csv, generate_series, unnest, query, …) as sources",
    "file-path": "no file paths or string literals used as tables",
    "qualified-name": "no schema- or database-qualified tables outside the store",
    "unknown-table": "only the store's catalog tables and CTEs defined in the query",
    "forbidden-function": "no functions that touch files, network, settings, sessions or sleep",
}

# Schemas that name the store's own default namespace (DuckDB ``main``, PostgreSQL
# ``public``); any other qualifier reaches system catalogs or attached databases.
_DEFAULT_SCHEMAS = frozenset({"main", "public"})

# Function names refused anywhere in a statement. Names are compared lower-cased.
_FORBIDDEN_FUNCTIONS = frozenset(
    {
        # DuckDB: files, environment, settings, SQL-in-a-string, extensions.
        "read_csv",
        "read_csv_auto",
        "read_parquet",
        "parquet_scan",
        "read_json",
        "read_json_auto",
        "read_json_objects",
        "read_ndjson",
        "read_ndjson_auto",
        "read_ndjson_objects",
        "read_text",
        "read_blob",
        "read_xlsx",
        "glob",
        "sniff_csv",
        "query",
        "query_table",
        "getenv",
        "current_setting",
        "getvariable",
        "json_execute_serialized_sql",
        "load_extension",
        "checkpoint",
        "force_checkpoint",
        "which_secret",
        "delta_scan",
        "iceberg_scan",
        "iceberg_metadata",
        "iceberg_snapshots",
        "sqlite_scan",
        "sqlite_attach",
        "postgres_scan",
        "postgres_query",
        "postgres_execute",
        "postgres_attach",
        "mysql_query",
        "mysql_execute",
        "httpfs",
        "sleep",
        "sleep_ms",
        # PostgreSQL: settings, sequences (writes), SQL-in-a-string, sessions, files.
        "set_config",
        "nextval",
        "setval",
        "currval",
        "lastval",
        "query_to_xml",
        "query_to_xmlschema",
        "query_to_xml_and_xmlschema",
        "table_to_xml",
        "table_to_xmlschema",
        "table_to_xml_and_xmlschema",
        "cursor_to_xml",
        "cursor_to_xmlschema",
        "schema_to_xml",
        "schema_to_xmlschema",
        "schema_to_xml_and_xmlschema",
        "database_to_xml",
        "database_to_xmlschema",
        "database_to_xml_and_xmlschema",
        "ts_stat",
        "ts_rewrite",
        "crosstab",
        "crosstab2",
        "crosstab3",
        "crosstab4",
        "connectby",
        "copy",
        "system",
        "shell",
    }
)
_FORBIDDEN_PREFIXES = (
    "pg_",  # pg_read_file, pg_ls_dir, pg_sleep, pg_terminate_backend, pg_reload_conf…
    "lo_",  # large objects: lo_import / lo_export read and write server files
    "dblink",
    "duckdb_",  # duckdb_settings, duckdb_secrets, duckdb_databases…
    "pragma_",
    "read_",
    "parquet_",
    "txid_",
    "sqlite_",
    "postgres_",
    "mysql_",
    "iceberg_",
    "delta_",
    "http_",
)

# Statement nodes that never belong inside a read-only query, wherever they appear
# (a PostgreSQL data-modifying CTE puts DELETE inside a SELECT).
_WRITE_NODES: tuple[type[exp.Expression], ...] = tuple(
    getattr(exp, name)
    for name in (
        "Insert",
        "Update",
        "Delete",
        "Merge",
        "Create",
        "Drop",
        "Alter",
        "TruncateTable",
        "Command",
        "Copy",
        "Set",
        "Pragma",
        "Attach",
        "Detach",
        "Use",
        "Install",
        "Transaction",
        "Commit",
        "Rollback",
        "Into",
        "Lock",
        "Returning",
        "Export",
        "Analyze",
        "Grant",
        "Revoke",
        "Comment",
        "Describe",
        "Show",
        "Summarize",
        "Refresh",
        "Cache",
        "Uncache",
        "LoadData",
    )
    if hasattr(exp, name)
)

_PATH_LIKE = re.compile(r"[./\\:~]|^(s3|gs|gcs|az|azure|abfss|hf|https?|file)$", re.IGNORECASE)

_log = logging.getLogger("sqlglot")


def parse_single(sql: str, dialect: str) -> exp.Expression:
    """Parse ``sql`` in ``dialect`` into exactly one statement, or refuse."""
    previous = _log.level
    # sqlglot logs a warning when it falls back to an opaque Command; we refuse those anyway.
    _log.setLevel(logging.ERROR)
    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except RecursionError:
        raise GuardError(
            "parse-error", "the statement is nested too deeply to check; simplify it"
        ) from None
    except (SqlglotError, ValueError, LookupError, TypeError, AttributeError) as error:
        # sqlglot raises more than ParseError on odd input (e.g. IndexError on "SHOW ALL").
        first_line = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise GuardError(
            "parse-error",
            f"the statement could not be parsed ({first_line}); write one plain SELECT",
        ) from None
    finally:
        _log.setLevel(previous)
    if not statements:
        raise GuardError("parse-error", "the statement is empty; write one SELECT")
    if len(statements) > 1:
        raise GuardError(
            "single-statement",
            f"{len(statements)} statements given; send exactly one SELECT per call",
        )
    return statements[0]


def _function_name(node: exp.Func) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return node.sql_name().lower()


def _is_forbidden_function(name: str) -> bool:
    return name in _FORBIDDEN_FUNCTIONS or name.startswith(_FORBIDDEN_PREFIXES)


def _visible_ctes(table: exp.Table) -> set[str]:
    """CTE names visible at ``table`` by SQL scoping (lower-cased).

    A CTE's body sees the CTEs before it (all of them under WITH RECURSIVE); the query
    that owns the WITH sees all of them. Anything else named like a CTE would resolve to
    a real relation, so it must pass the table rules.
    """
    names: set[str] = set()
    child: exp.Expression = table
    parent = table.parent
    while parent is not None:
        if isinstance(parent, exp.With):
            ctes = list(parent.expressions)
            recursive = bool(parent.args.get("recursive"))
            for cte in ctes:
                if cte is child and not recursive:
                    break
                names.add(cte.alias_or_name.lower())
        else:
            with_ = parent.args.get("with_") or parent.args.get("with")
            if isinstance(with_, exp.With) and child is not with_:
                names.update(cte.alias_or_name.lower() for cte in with_.expressions)
        child = parent
        parent = parent.parent
    return names


def _is_source_position(node: exp.Expression) -> bool:
    return isinstance(node.parent, (exp.From, exp.Join, exp.Lateral, exp.Table))


def _check_table(table: exp.Table, allowed: Collection[str]) -> None:
    target = table.this
    if table.args.get("rows_from"):
        raise GuardError("table-function", "ROWS FROM (...) table functions are not allowed")
    if isinstance(target, exp.Literal):
        raise GuardError(
            "file-path",
            f"the string {target.sql()} is used as a table; only catalog tables can be read",
        )
    if not isinstance(target, exp.Identifier):
        what = _function_name(target) if isinstance(target, exp.Func) else target.key
        raise GuardError(
            "table-function",
            f"table function {what}(...) is not allowed; select from catalog tables only",
        )
    name = str(target.this)
    if _PATH_LIKE.search(name):
        raise GuardError(
            "file-path",
            f"{name!r} looks like a file path or URL; only catalog tables can be read",
        )
    db = table.args.get("db")
    catalog = table.args.get("catalog")
    if catalog is not None or (db is not None and str(db.name).lower() not in _DEFAULT_SCHEMAS):
        raise GuardError(
            "qualified-name",
            f"{table.sql()} is qualified with a schema or database outside the store; "
            "use the bare catalog table name",
        )
    lowered = name.lower()
    if db is None and lowered in _visible_ctes(table):
        return
    if lowered not in allowed:
        raise GuardError(
            "unknown-table",
            f"table {name!r} is not in the store's catalog; run `foretab tables` to list them",
        )


def check_query(statement: exp.Expression, allowed_tables: Collection[str]) -> exp.Query:
    """Return ``statement`` as a query if every rule holds, else raise ``GuardError``.

    ``allowed_tables`` are lower-case table names the query may read.
    """
    root = statement
    if not isinstance(root, exp.Query):
        raise GuardError(
            "read-only",
            f"only a SELECT query is allowed, got {_describe(root)}",
        )
    for node in root.walk():
        if isinstance(node, _WRITE_NODES):
            raise GuardError(
                "read-only",
                f"{_describe(node)} is not allowed inside a read-only query",
            )
        if isinstance(node, exp.Table):
            _check_table(node, allowed_tables)
        elif isinstance(node, (exp.Unnest, exp.Lateral)) and _is_source_position(node):
            if isinstance(node, exp.Lateral) and isinstance(node.this, exp.Subquery):
                continue
            raise GuardError(
                "table-function",
                f"{node.key.upper()} as a table source is not allowed; select from catalog tables",
            )
        elif isinstance(node, exp.Func):
            name = _function_name(node)
            if _is_source_position(node):
                raise GuardError(
                    "table-function",
                    f"table function {name}(...) is not allowed; select from catalog tables",
                )
            if _is_forbidden_function(name):
                raise GuardError(
                    "forbidden-function",
                    f"function {name}() is not allowed (file, network, settings or session "
                    "access); use plain SQL expressions",
                )
    return root


def _describe(node: exp.Expression) -> str:
    if isinstance(node, exp.Command):
        return f"the {str(node.this).upper()} command"
    if isinstance(node, exp.Into):
        return "SELECT ... INTO"
    if isinstance(node, exp.Lock):
        return "FOR UPDATE/SHARE locking"
    if isinstance(node, exp.Returning):
        return "RETURNING (a data-modifying statement)"
    if isinstance(node, _WRITE_NODES):
        return f"a {node.key.upper()} statement"
    if isinstance(node, exp.Values):
        return "a bare VALUES list"
    return f"{node.sql()[:40]!r}, which is not a query"
