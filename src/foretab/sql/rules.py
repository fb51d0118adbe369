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
    "forbidden-function": "only allowlisted aggregate, window, arithmetic, text, date and cast "
    "functions (nothing that touches files, settings, sessions or runs SQL from a string)",
    "query-size": "statements are at most 100,000 characters (GuardedExecutor max_query_chars)",
    "cte-name": "a CTE may not be named like an existing table, view or system relation",
    # forecast(table [, horizon => N] [, level => p] [, entities => [...]]): docs/design.md §10
    "forecast-table": "forecast()'s first argument is a string literal naming a history table "
    "of the store's catalog (never the future store, a CTE, a path or an expression)",
    "forecast-option": "forecast() options are horizon => 1..the store's horizon, level => "
    "0.5..0.98, entities => a list of string literals naming the table's entities; literals "
    "only, each at most once",
    "forecast-nesting": "no forecast() inside forecast()'s own arguments",
    "forecast-position": "forecast(...) is a relation: in FROM or JOIN only, unqualified, at "
    "most 4 calls per statement",
    "forecast-unavailable": "forecast() runs only where the store's fitted model is loaded "
    "(Engine.sql, foretab sql, POST /api/sql)",
}

# Schemas that name the store's own default namespace (DuckDB ``main``, PostgreSQL
# ``public``); any other qualifier reaches system catalogs or attached databases.
_DEFAULT_SCHEMAS = frozenset({"main", "public"})

# Functions by allowlist: what an analyst needs over monthly price tables (aggregates,
# window functions, arithmetic, text, dates, casts). Anything else - functions that run SQL
# held in a string (json_serialize_plan, query_to_xml), touch files, settings or sessions,
# or build huge values (repeat, range, list functions) - is refused by name. Typed sqlglot
# nodes are matched by class, so every spelling sqlglot maps to one class shares its verdict.
ALLOWED_FUNCTION_CLASSES: frozenset[str] = frozenset(
    {
        # aggregates
        "Count", "Sum", "Avg", "Min", "Max", "Median", "Mode", "First", "Last", "AnyValue",
        "Stddev", "StddevPop", "StddevSamp", "Variance", "VariancePop", "Kurtosis", "Skewness",
        "Quantile", "PercentileCont", "PercentileDisc", "ApproxQuantile", "ApproxDistinct",
        "ArgMax", "ArgMin", "CountIf", "Corr", "CovarSamp", "CovarPop", "RegrSlope",
        "RegrIntercept", "RegrR2", "LogicalAnd", "LogicalOr", "GroupConcat", "Grouping",
        # window functions
        "RowNumber", "Rank", "DenseRank", "PercentRank", "CumeDist", "Ntile", "Lag", "Lead",
        "FirstValue", "LastValue", "NthValue",
        # arithmetic
        "Abs", "Round", "Ceil", "Floor", "Trunc", "Sign", "Sqrt", "Cbrt", "Pow", "Exp", "Ln",
        "Log", "Greatest", "Least", "Pi", "IsNan", "IsInf", "WidthBucket", "Degrees", "Radians",
        # conditionals, casts, operators and predicates sqlglot models as functions
        "Case", "If", "Coalesce", "Nullif", "Cast", "TryCast", "Exists", "And", "Or", "Xor",
        "Collate", "RegexpILike",
        # text
        "Lower", "Upper", "Length", "Trim", "Substring", "Replace", "Concat", "ConcatWs", "Left",
        "Right", "StrPosition", "StartsWith", "EndsWith", "Pad", "SplitPart", "RegexpLike",
        "RegexpReplace", "RegexpExtract", "Reverse", "Initcap", "Contains", "Translate",
        # dates
        "Extract", "TimestampTrunc", "DateTrunc", "Year", "Month", "Quarter", "Day", "DayOfMonth",
        "DayOfWeek", "DayOfWeekIso", "DayOfYear", "Week", "Monthname", "Dayname", "DateDiff",
        "DateAdd", "DateSub", "DateFromParts", "LastDay", "CurrentDate", "Date", "TimeToStr",
        "ToChar", "StrToTime", "StrToDate", "TimeToUnix",
    }
)  # fmt: skip
# Functions sqlglot does not model (parsed as ``Anonymous``), by lower-case name. A quoted
# name (``"pg_read_file"``) is judged by its bare name like any other.
ALLOWED_FUNCTION_NAMES: frozenset[str] = frozenset(
    {
        "date_part", "datepart", "make_date", "date_sub", "age", "epoch", "strftime",
        "strptime", "to_date", "dayofyear", "weekday", "yearweek", "isodow", "isoyear",
        "quantile_cont", "quantile_disc", "quantile", "listagg", "every", "bool_and", "bool_or",
        "iff", "ifnull", "nvl", "regexp_matches", "isfinite", "gcd", "lcm", "product", "fsum",
        "favg", "log10", "log2", "ln", "btrim", "strlen", "prefix", "suffix", "sem", "mad",
        "rank", "dense_rank", "row_number", "percent_rank", "cume_dist", "ntile", "lag", "lead",
        "first_value", "last_value", "nth_value", "arg_max", "arg_min", "max_by", "min_by",
        "stddev", "variance", "var_samp", "var_pop", "covar_samp", "covar_pop", "corr",
        "regr_slope", "regr_intercept", "regr_r2", "regr_count", "regr_avgx", "regr_avgy",
        "trunc", "round", "ceil", "floor", "abs", "sign", "sqrt", "power", "pow", "exp",
        "greatest", "least", "coalesce", "nullif",
    }
)  # fmt: skip

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


def _is_allowed_function(node: exp.Func) -> bool:
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower() in ALLOWED_FUNCTION_NAMES
    return type(node).__name__ in ALLOWED_FUNCTION_CLASSES


def _visible_ctes(table: exp.Table) -> set[str]:
    """CTE names visible at ``table`` by SQL scoping (lower-cased).

    A CTE's body sees the CTEs before it; the query that owns the WITH sees all of them.
    Under WITH RECURSIVE a CTE also sees itself, but only in the recursive term of a
    UNION body: DuckDB resolves a forward reference, or a self-reference anywhere else,
    to a real relation of that name, so such a name must pass the table rules.
    """
    names: set[str] = set()
    child: exp.Expression = table
    parent = table.parent
    while parent is not None:
        if isinstance(parent, exp.With):
            recursive = bool(parent.args.get("recursive"))
            for cte in parent.expressions:
                if cte is child:
                    if recursive and _in_recursive_term(table, cte):
                        names.add(cte.alias_or_name.lower())
                    break
                names.add(cte.alias_or_name.lower())
        else:
            with_ = parent.args.get("with_") or parent.args.get("with")
            if isinstance(with_, exp.With) and child is not with_:
                names.update(cte.alias_or_name.lower() for cte in with_.expressions)
        child = parent
        parent = parent.parent
    return names


def _in_recursive_term(table: exp.Table, cte: exp.CTE) -> bool:
    body = cte.this
    if not isinstance(body, exp.Union):
        return False
    term = body.expression
    node: exp.Expression | None = table
    while node is not None and node is not body:
        if node is term:
            return True
        node = node.parent
    return False


# Prefixes of system relations on either backend (pg_settings, duckdb_databases,
# sqlite_master, pragma_database_list, information_schema views) and foretab's own tables.
_SYSTEM_PREFIXES = ("pg_", "duckdb_", "sqlite_", "pragma_", "information_schema", "foretab_")


def _check_cte_names(root: exp.Expression, reserved: Collection[str]) -> None:
    for cte in root.find_all(exp.CTE):
        name = cte.alias_or_name.lower()
        if name in reserved or name.startswith(_SYSTEM_PREFIXES):
            raise GuardError(
                "cte-name",
                f"the CTE {cte.alias_or_name!r} is named like an existing table, view or "
                "system relation; give it another name",
            )


def _is_source_position(node: exp.Expression) -> bool:
    # Only the relation itself: a JOIN's ON condition (``a.x = b.x AND ...``) is a value.
    return node.arg_key == "this" and isinstance(
        node.parent, (exp.From, exp.Join, exp.Lateral, exp.Table)
    )


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
    if db is not None:
        # ``public.t`` / ``main.t`` mean the store's own namespace; PostgreSQL keeps each
        # generation in a schema of its own, which the session's search path names.
        table.set("db", None)


def check_query(
    statement: exp.Expression,
    allowed_tables: Collection[str],
    reserved_names: Collection[str] = (),
) -> exp.Query:
    """Return ``statement`` as a query if every rule holds, else raise ``GuardError``.

    ``allowed_tables`` are lower-case table names the query may read; ``reserved_names``
    every other lower-case relation name the connection can resolve (no CTE may take one).
    """
    root = statement
    if not isinstance(root, exp.Query):
        raise GuardError(
            "read-only",
            f"only a SELECT query is allowed, got {_describe(root)}",
        )
    _check_cte_names(root, {*allowed_tables, *reserved_names})
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
            if not _is_allowed_function(node):
                raise GuardError(
                    "forbidden-function",
                    f"function {name}() is not on the guard's allowlist of aggregate, window, "
                    "arithmetic, text and date functions; rewrite the query with those "
                    "(docs/safety.md lists them)",
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
