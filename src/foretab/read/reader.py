"""History readers: run a history query through the SQL guard and type its rows.

Rows become a ``History`` keyed by the plan's exact entities. The columns are fixed by
contract — the schema's entity, month and measure columns (``project_name, month, price``
for the real-estate schema) and, when the query can return rows of several places, ``city``
and ``district`` — and a row that names no plan entity, or could be more
than one, is an error rather than a row silently dropped.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from foretab.core.catalog import CatalogEntry, Retrieval
from foretab.core.months import Month
from foretab.core.plan import EntityRef, Metric, Plan, ScopeOp
from foretab.core.series import History, ScopeOutcome
from foretab.core.stages import HistoryRead
from foretab.corpus.schema import TableColumns
from foretab.errors import QueryError, QuestionError
from foretab.retrieve import history_span
from foretab.sql.build import HistoryQuery, default_columns, history_query, scope_query
from foretab.sql.guard import GuardedExecutor, QueryResult
from foretab.sql.scope import scope_answer_query, scope_columns


def rows_to_history(
    result: QueryResult,
    entities: Sequence[EntityRef],
    metric: Metric = Metric.VALUE,
    *,
    scope: bool = False,
    cols: TableColumns | None = None,
) -> History:
    """Type the rows of a history query as one series per plan entity.

    ``metric`` picks the value column (the primary measure's or the summed one's); units,
    when returned, are kept beside it. A scope read (``scope=True``) scans whole tables, so
    rows of entities that are not candidates (not active in the months the plan asks about) are
    skipped; any other query must return only the plan's entities.
    """
    cols = cols or default_columns()
    columns = [c.lower() for c in result.columns]
    if metric is Metric.UNITS and cols.summed is None:
        raise QuestionError("this corpus has no summed measure to ask about")
    column = cols.summed if metric is Metric.UNITS and cols.summed else cols.value
    required = (cols.entity, cols.month, column)
    missing = [c for c in required if c not in columns]
    if missing:
        raise QueryError(
            f"the history query returned columns {columns}; it must return "
            f"{', '.join(required)} (and {cols.outer}, {cols.inner} to tell places apart)"
        )
    at = {name: columns.index(name) for name in columns}
    i_entity, i_month, i_value = at[cols.entity], at[cols.month], at[column]
    i_outer, i_inner = at.get(cols.outer), at.get(cols.inner)
    i_units = at.get(cols.summed) if cols.summed else None
    series: dict[EntityRef, dict[Month, float]] = {ref: {} for ref in entities}
    # Each entity's key in the rows, to the entity and its series (a scope read has
    # thousands of rows: one lookup a row, no entity hashed).
    exact = (
        {(ref.outer, ref.inner, ref.name): (ref, series[ref]) for ref in entities}
        if i_outer is not None and i_inner is not None
        else None
    )
    by_name: dict[str, list[EntityRef]] = {}  # without the place columns: by name alone
    for ref in entities if exact is None else ():
        by_name.setdefault(ref.name, []).append(ref)
    units: dict[EntityRef, dict[Month, float]] = {}
    dropped = 0
    months: dict[object, Month] = {}
    for row in result.rows:
        name = str(row[i_entity])
        if exact is not None:
            slot = exact.get((row[i_outer], row[i_inner], name))  # type: ignore[index]
        else:
            candidates = [
                r
                for r in by_name.get(name, [])
                if (i_outer is None or r.outer == row[i_outer])
                and (i_inner is None or r.inner == row[i_inner])
            ]
            if len(candidates) > 1:
                raise QueryError(
                    f"the history query returned a row for {name!r} without {cols.outer} and "
                    f"{cols.inner} columns, and the question names several entities of that name"
                )
            slot = (candidates[0], series[candidates[0]]) if candidates else None
        if slot is None:
            if scope:
                continue
            raise QueryError(
                f"the history query returned a row for {name!r}, which the question does not "
                "name; a history query must read only the question's entities"
            )
        ref, values = slot
        day = row[i_month]
        month = months.get(day)
        if month is None:  # a read's rows share a few months: each is made once
            month = months[day] = Month.from_date(day)
        if i_units is not None and row[i_units] is not None:
            units.setdefault(ref, {})[month] = float(row[i_units])
        value = row[i_value]
        if value is None or not math.isfinite(value := float(value)):
            dropped += 1
            continue
        values[month] = value
    return History(series, measure=column, dropped_rows=dropped, units=units)


def _read(
    guard: GuardedExecutor,
    plan: Plan,
    sql: object,
    params: tuple[object, ...],
    cols: TableColumns | None,
) -> HistoryRead:
    return _typed(plan, guard.execute(sql, params), params, cols)  # type: ignore[arg-type]


def _typed(
    plan: Plan, result: QueryResult, params: tuple[object, ...], cols: TableColumns | None
) -> HistoryRead:
    scope = bool(plan.scopes)
    if scope and result.truncated:
        raise QuestionError(
            f"the scope {', '.join(s.label for s in plan.scopes)} holds more rows than one "
            f"query may return ({len(result.rows)}); ask about {_smaller(plan)} or a shorter window"
        )
    return HistoryRead(
        rows_to_history(result, plan.entities, plan.metric, scope=scope, cols=cols),
        sql=result.sql,
        params=params,
        rows=len(result.rows),
        truncated=result.truncated,
    )


def _smaller(plan: Plan) -> str:
    """What to ask about instead of a too-large scope: one inner group (a district)."""
    groups = plan.wording.groups
    return f"a {groups[0]}" if groups else f"fewer {plan.wording.entities}"


class GuardedHistoryReader:
    """The engine's own history query (``foretab.sql.build``), run through the guard."""

    name = "sql"

    def __init__(self, guard: GuardedExecutor, cols: TableColumns | None = None) -> None:
        self.guard = guard
        self.cols = cols or default_columns()

    def read(self, plan: Plan, retrieval: Retrieval) -> HistoryRead:
        if plan.scope is not None and plan.is_past and plan.scope.op is not ScopeOp.WEIGHTED:
            # (a weighted price pools the projects' months: read as rows, weighed in analyze)
            return _read_scope(self.guard, plan, retrieval, self.cols)
        first, last = history_span(plan)
        if plan.scopes:
            query = scope_query(retrieval.tables, first, last, self.cols)
            if query is not None:
                return _read_scope_rows(self.guard, plan, retrieval, query, first, last, self.cols)
        else:
            query = history_query(retrieval.tables, plan.entities, first, last, self.cols)
        if query is None:
            return HistoryRead(History.empty(plan.entities))
        return _read(self.guard, plan, query.sql(self.guard.dialect), query.params, self.cols)


def _read_scope_rows(
    guard: GuardedExecutor,
    plan: Plan,
    retrieval: Retrieval,
    query: HistoryQuery,
    first: Month,
    last: Month,
    cols: TableColumns,
) -> HistoryRead:
    """A scope's rows; over the row cap, one guarded query per inner group (a district).

    A whole city's 24 months of history (what its forecast reads) can pass the cap of one
    query while each of its districts is well under it; each query keeps every limit.
    """
    result = guard.execute(query.sql(guard.dialect), query.params)
    groups: dict[str, list[CatalogEntry]] = {}
    for table in retrieval.tables:
        groups.setdefault(table.inner, []).append(table)
    if not result.truncated or len(groups) < 2:
        return _typed(plan, result, query.params, cols)
    reads = []
    for tables in groups.values():
        part = scope_query(tables, first, last, cols)
        if part is not None:
            reads.append(
                _typed(plan, guard.execute(part.sql(guard.dialect), part.params), part.params, cols)
            )
    histories = [r.history for r in reads]
    return HistoryRead(
        History(
            {ref: dict(s) for h in histories for ref, s in h.series.items() if s}
            | {ref: {} for ref in plan.entities if not any(h.series.get(ref) for h in histories)},
            measure=histories[0].measure,
            dropped_rows=sum(h.dropped_rows for h in histories),
            units={ref: dict(u) for h in histories for ref, u in h.units.items()},
        ),
        sql=";\n".join(r.sql for r in reads),
        params=tuple(p for r in reads for p in r.params),
        rows=sum(r.rows for r in reads),
    )


def _read_scope(
    guard: GuardedExecutor, plan: Plan, retrieval: Retrieval, cols: TableColumns
) -> HistoryRead:
    """A past scope question answered by its SQL: ranked, filtered and aggregated there."""
    assert plan.scope is not None
    measure = cols.summed_role if plan.metric is Metric.UNITS else cols.value
    months = plan.window.months
    query = scope_answer_query(plan.scopes, plan.scope, retrieval.tables, months, cols)
    if query is None:
        outcomes = tuple(ScopeOutcome(0) for _ in plan.scopes)
        return HistoryRead(History({}, measure, scopes=outcomes))
    result = guard.execute(query.sql(guard.dialect), query.params)
    return HistoryRead(
        History({}, measure, scopes=scope_outcomes(result, plan, cols)),
        sql=result.sql,
        params=query.params,
        rows=len(result.rows),
        truncated=result.truncated,
    )


def scope_outcomes(
    result: QueryResult, plan: Plan, cols: TableColumns | None = None
) -> tuple[ScopeOutcome, ...]:
    """The rows of a scope answer query (``foretab.sql.scope``) as one outcome per scope."""
    expected = scope_columns(cols or default_columns())
    columns = tuple(c.lower() for c in result.columns)
    if columns != expected:
        raise QueryError(f"the scope query returned columns {list(columns)}, not {expected}")
    if result.truncated:
        raise QueryError(
            f"the scope query returned more than {len(result.rows)} rows; ask for fewer "
            f"{plan.wording.entities} (a smaller N or a narrower {plan.wording.value} range)"
        )
    refs = {(r.outer, r.inner, r.name): r for r in plan.entities}
    counts = [0 for _ in plan.scopes]
    values: list[float | None] = [None for _ in plan.scopes]
    picked: list[list[tuple[EntityRef, float]]] = [[] for _ in plan.scopes]
    for scope, pos, outer, inner, name, value, candidates in result.rows:
        if pos == 0:
            counts[scope] = int(candidates)
            values[scope] = None if value is None else float(value)
            continue
        key = (str(outer), str(inner), str(name))
        # A candidate the planner listed keeps its Chinese name; the SQL saw the same rows.
        ref = refs.get(key) or EntityRef(*key)
        picked[scope].append((ref, float(value)))
    return tuple(
        ScopeOutcome(counts[i], tuple(picked[i]), values[i]) for i in range(len(plan.scopes))
    )


class GivenSQLReader:
    """History from SQL chosen per question by someone else.

    The golden-history ablation or an LLM agent: ``sql_for(plan)`` returns the query text,
    which still runs through the guard.
    """

    def __init__(
        self,
        guard: GuardedExecutor,
        sql_for: Callable[[Plan], str],
        name: str = "given-sql",
        cols: TableColumns | None = None,
    ) -> None:
        self.guard = guard
        self.sql_for = sql_for
        self.name = name
        self.cols = cols

    def read(self, plan: Plan, retrieval: Retrieval) -> HistoryRead:
        del retrieval  # the given SQL names its own tables
        return _read(self.guard, plan, self.sql_for(plan), (), self.cols)
