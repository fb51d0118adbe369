"""Parse and check one guarded statement, then cap its rows (runs inside the worker)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from sqlglot import exp

from foretab.errors import GuardError, QueryError
from foretab.sql.forecast_call import (
    ForecastCall,
    ForecastRows,
    ForecastSupport,
    bind_relations,
    extract_calls,
    stand_in_names,
)
from foretab.sql.rules import check_query, parse_single


@dataclass(frozen=True, slots=True)
class CheckedQuery:
    """A checked, capped query; ``params`` are the forecasts' arrays (before the caller's).

    With forecast calls and no rows for them yet, ``calls`` says what to compute and
    ``query`` still holds the stand-ins (it is not run).
    """

    query: exp.Query
    text: str
    calls: tuple[ForecastCall, ...] = ()
    params: tuple[object, ...] = ()
    bound: bool = True


def checked_query(
    sql: str | exp.Expression,
    dialect: str,
    allowed: Collection[str],
    reserved: Collection[str],
    row_cap: int,
    forecast: ForecastSupport | None = None,
    forecasts: Sequence[ForecastRows] | None = None,
) -> CheckedQuery:
    """The statement as a checked query capped at ``row_cap`` rows, and its SQL text.

    ``forecast``: the executor can forecast (else a ``forecast()`` call is refused);
    ``forecasts``: the rows of its calls, in order, to bind (``None``: not computed yet).
    """
    if isinstance(sql, str):
        statement = parse_single(sql, dialect)
    elif isinstance(sql, exp.Expression):
        statement = sql.copy()
    else:
        raise GuardError("parse-error", f"expected SQL text or a sqlglot AST, got {type(sql)}")
    calls: tuple[ForecastCall, ...] = ()
    try:
        if isinstance(statement, exp.Query):
            calls = extract_calls(statement, allowed, forecast.horizon if forecast else 0)
        query = check_query(statement, {*allowed, *stand_in_names(calls)}, reserved)
    except RecursionError:
        raise GuardError(
            "parse-error", "the statement is nested too deeply to check; simplify it"
        ) from None
    for node in query.find_all(exp.Placeholder):
        if node.this not in (None, ""):
            raise QueryError(
                f"named or numbered placeholder {node.sql()} is not supported; use '?'"
            )
    params: tuple[object, ...] = ()
    bound = True
    if calls:
        assert forecast is not None
        if forecasts is None:
            bound = False
            forecasts = [ForecastRows.empty(forecast.entity_column) for _ in calls]
        if len(forecasts) != len(calls):
            raise QueryError(
                f"the statement has {len(calls)} forecast() call(s) but {len(forecasts)} "
                "forecast(s) were computed; run it again"
            )
        query, params = bind_relations(query, forecasts)
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
    return CheckedQuery(query, text, calls, params, bound)


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
