"""Parse and check one guarded statement, then cap its rows (runs inside the worker)."""

from __future__ import annotations

from collections.abc import Collection

from sqlglot import exp

from foretab.errors import GuardError, QueryError
from foretab.sql.rules import check_query, parse_single


def checked_query(
    sql: str | exp.Expression,
    dialect: str,
    allowed: Collection[str],
    reserved: Collection[str],
    row_cap: int,
) -> tuple[exp.Query, str]:
    """The statement as a checked query capped at ``row_cap`` rows, and its SQL text."""
    if isinstance(sql, str):
        statement = parse_single(sql, dialect)
    elif isinstance(sql, exp.Expression):
        statement = sql.copy()
    else:
        raise GuardError("parse-error", f"expected SQL text or a sqlglot AST, got {type(sql)}")
    try:
        query = check_query(statement, allowed, reserved)
    except RecursionError:
        raise GuardError(
            "parse-error", "the statement is nested too deeply to check; simplify it"
        ) from None
    for node in query.find_all(exp.Placeholder):
        if node.this not in (None, ""):
            raise QueryError(
                f"named or numbered placeholder {node.sql()} is not supported; use '?'"
            )
    query = cap_rows(query, row_cap)
    try:
        # Generated once, here: a generator failure is a refusal, not a crash.
        text = query.sql(dialect=dialect, comments=False)
    except RecursionError:
        raise GuardError(
            "parse-error", "the statement is nested too deeply to check; simplify it"
        ) from None
    except Exception as error:  # sqlglot raises assorted errors on odd trees
        raise GuardError(
            "parse-error", f"the statement cannot be regenerated ({type(error).__name__})"
        ) from None
    return query, text


def cap_rows(query: exp.Query, cap: int) -> exp.Query:
    """Make the outermost query return at most ``cap`` rows without changing its meaning."""
    limit = query.args.get("limit")
    if limit is None and not query.args.get("offset"):
        query.set("limit", exp.Limit(expression=exp.Literal.number(cap)))
        return query
    if isinstance(limit, exp.Limit):
        value = limit.expression
        if isinstance(value, exp.Literal) and not value.is_string and value.this.isdigit():
            if int(value.this) > cap:
                limit.set("expression", exp.Literal.number(cap))
            return query
    # Any other LIMIT/FETCH/OFFSET shape: wrap, so the original clauses apply first.
    wrapped = exp.select("*").from_(query.subquery("foretab_result"))
    return wrapped.limit(cap)
