"""``Engine.ask``: question → Plan → tables → SQL → series → forecast → answer, traced."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from foretab.analyze import analyze
from foretab.answer import Answer, Series, Trace
from foretab.future import FutureMode, FutureSource, future_source
from foretab.months import Month
from foretab.parse.entities import EntityIndex
from foretab.parse.parser import parse_question
from foretab.parse.plan import Plan, ProjectRef
from foretab.retrieve import Retrieval, Retriever, history_span
from foretab.sql.build import history_query
from foretab.sql.guard import GuardedExecutor, QueryResult
from foretab.store import open_history


class Engine:
    """Answers questions over one store; build once, ask many times (indexes stay warm).

    ``future``: ``model`` forecasts with the model trained for the store (``foretab
    train``); ``oracle`` reads the future store (evaluation only); ``none`` carries the last
    observed price forward.
    """

    def __init__(
        self,
        db: str,
        *,
        future: FutureMode = "model",
        model: str | None = None,
        max_rows: int = 10_000,
        timeout_s: float = 5.0,
    ) -> None:
        self.db = db
        self.store = open_history(db)
        projects = self.store.projects()
        self.reference: Month = self.store.reference_month or max(p.last_month for p in projects)
        self.index = EntityIndex(projects)
        self.retriever = Retriever(self.store.catalog())
        self.guard = GuardedExecutor(self.store.location, max_rows=max_rows, timeout_s=timeout_s)
        self.future_mode = future
        self._model = model
        self._future: FutureSource | None = None

    def close(self) -> None:
        self.guard.close()
        self.store.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def future(self) -> FutureSource:
        # Loaded on first use: history questions never need a model or the future store.
        if self._future is None:
            self._future = future_source(self.future_mode, self.db, self.store, self._model)
        return self._future

    def parse(self, question: str) -> Plan:
        return parse_question(question, self.index, self.reference)

    def ask(
        self,
        question: str,
        *,
        tables: Sequence[str] | None = None,
        history_sql: str | None = None,
    ) -> Answer:
        """Answer ``question``.

        ``tables`` replaces retrieval with the given table names (golden captions);
        ``history_sql`` replaces the engine's own history query (golden history); both
        still run through the SQL guard.
        """
        timings: dict[str, float] = {}
        with _timed(timings, "parse"):
            plan = self.parse(question)
        with _timed(timings, "retrieve"):
            retrieval = self.retriever.by_names(tables) if tables else self.retriever.retrieve(plan)
        with _timed(timings, "sql"):
            result, params = self._history_rows(plan, retrieval, history_sql)
            history = _series(result, plan.projects)
        future_months = [m for m in plan.window.months if m > self.reference]
        forecast: Series = {}
        source = "none needed"
        if future_months:
            with _timed(timings, "forecast"):
                forecast = self.future.values(history, plan.projects, future_months)
                source = self.future.name
        with _timed(timings, "analyze"):
            analysis = analyze(plan, history, forecast)
        timings["total"] = sum(timings.values())
        trace = Trace(
            tables=tuple(t.table_name for t in retrieval.tables),
            retrieval=tuple((m.caption, m.method) for m in retrieval.matches),
            sql=result.sql if result else "",
            params=params,
            history_rows=len(result.rows) if result else 0,
            future_source=source,
            timings=timings,
        )
        return Answer(
            question=question,
            answer=analysis.answer,
            text=analysis.text,
            task=plan.task,
            plan=plan,
            trace=trace,
            history=history,
            forecast=forecast,
        )

    def _history_rows(
        self, plan: Plan, retrieval: Retrieval, history_sql: str | None
    ) -> tuple[QueryResult | None, tuple[object, ...]]:
        if history_sql is not None:
            return self.guard.execute(history_sql), ()
        first, last = history_span(plan)
        query = history_query(retrieval.tables, plan.projects, first, last)
        if query is None:
            return None, ()
        return self.guard.execute(query.ast, query.params), query.params


def _series(
    result: QueryResult | None, projects: Sequence[ProjectRef]
) -> dict[ProjectRef, dict[Month, float]]:
    """Rows (``[district,] project_name, month, price``) → one series per plan project."""
    series: dict[ProjectRef, dict[Month, float]] = {ref: {} for ref in projects}
    if result is None:
        return series
    columns = [c.lower() for c in result.columns]
    by_key = {(ref.district, ref.project): ref for ref in projects}
    by_name: dict[str, list[ProjectRef]] = {}
    for ref in projects:
        by_name.setdefault(ref.project, []).append(ref)
    i_name = _column(columns, ("project_name", "project"))
    i_month = _column(columns, ("month", "date"))
    i_price = _column(columns, ("price", "avg_price", "average_transaction_price"))
    i_district = columns.index("district") if "district" in columns else None
    for row in result.rows:
        if row[i_price] is None:
            continue
        name = str(row[i_name])
        ref = by_key.get((str(row[i_district]), name)) if i_district is not None else None
        if ref is None and len(by_name.get(name, ())) == 1:
            ref = by_name[name][0]
        if ref is None:
            continue
        series[ref][Month.from_date(row[i_month])] = float(row[i_price])
    return series


def _column(columns: list[str], names: tuple[str, ...]) -> int:
    for name in names:
        if name in columns:
            return columns.index(name)
    from foretab.errors import QueryError

    raise QueryError(f"the history query returned columns {columns}; it needs one of {list(names)}")


@contextmanager
def _timed(timings: dict[str, float], step: str) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        timings[step] = time.perf_counter() - started
