"""``Engine.ask``: plan → retrieve → read → forecast → analyze, each stage one implementation.

The engine composes implementations of the stage interfaces in ``foretab.core.stages``.
The defaults are the rule planner, caption retrieval, the guarded history query, the
store's fitted model and the exact analyzer; the benchmark's ablations and the LLM agents
pass other implementations — ``ask`` itself has no switches::

    with Engine("corpus.duckdb") as engine:
        answer = engine.ask("What will the price of Poly Central Park in Jiangning, Nanjing be next month?")
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from sqlglot import exp

from foretab.analyze import RuleAnalyzer
from foretab.core.answer import Answer
from foretab.core.plan import Metric, Plan, Wording
from foretab.core.series import Forecast
from foretab.core.stages import (
    Analyzer,
    FutureSource,
    HistoryReader,
    Planner,
    TableRetriever,
)
from foretab.core.trace import (
    AnalyzeStep,
    ForecastStep,
    PlanStep,
    ReadStep,
    RetrieveStep,
    Step,
    Trace,
)
from foretab.errors import QuestionError
from foretab.future import FutureMode, future_source
from foretab.limits import check_question
from foretab.months import Month
from foretab.parse.entities import EntityIndex
from foretab.parse.lexicon import Lexicon
from foretab.parse.parser import parse_question
from foretab.read import GuardedHistoryReader
from foretab.retrieve import Retriever
from foretab.sql.forecast_rows import StoreForecasts
from foretab.sql.guard import GuardedExecutor, QueryResult
from foretab.store import open_history

if TYPE_CHECKING:
    from foretab.forecast.source import SeriesModel

T = TypeVar("T")


class RulePlanner:
    """The rule-based planner (no LLM): entity linking, time expressions, family cues."""

    name = "rules"

    def __init__(
        self, index: EntityIndex, reference: Month, lexicon: Lexicon | None = None
    ) -> None:
        self.index = index
        self.reference = reference
        self.lexicon = lexicon

    def plan(self, question: str) -> Plan:
        return parse_question(question, self.index, self.reference, self.lexicon)


class Engine:
    """Answers questions over one store; build once, ask many times (indexes stay warm).

    ``future``: ``model`` forecasts the series read with the model fitted for the store;
    ``oracle`` reads the future store (evaluation only); ``none`` carries the last observed
    price forward. Any stage can be replaced by passing an implementation; a factory
    (``reader=lambda engine: ...``) receives the engine, for stages that need its guard.
    """

    def __init__(
        self,
        db: str,
        *,
        future: FutureMode = "model",
        model: str | None = None,
        max_rows: int = 10_000,
        timeout_s: float = 5.0,
        planner: Planner | None = None,
        retriever: TableRetriever | Callable[[Engine], TableRetriever] | None = None,
        reader: HistoryReader | Callable[[Engine], HistoryReader] | None = None,
        future_source: FutureSource | Callable[[Engine], FutureSource] | None = None,
        analyzer: Analyzer | None = None,
        level: float | None = None,
        decision: str | None = None,
    ) -> None:
        self.db = db
        self.store = open_history(db)
        try:
            entities = self.store.entities()
            self.reference: Month = self.store.reference_month or max(
                p.last_month for p in entities
            )
            #: the corpus schema stored with the store: entity levels, measures, table names
            self.schema = self.store.schema
            self.lexicon = Lexicon.of(self.schema)
            self.index = EntityIndex(entities, self.lexicon.zh_words, self.lexicon.wording)
            # The store itself: the guard reads the generation the store opened.
            self.guard = GuardedExecutor(
                self.store,
                max_rows=max_rows,
                timeout_s=timeout_s,
                forecasts=StoreForecasts(self.store, self._series_model),
            )
        except BaseException:
            self.store.close()
            raise
        # Any planner's plan is worded in the corpus's own terms ("price", "units sold").
        self.wording = Wording.of(self.schema)
        self.planner: Planner = planner or RulePlanner(self.index, self.reference, self.lexicon)
        self.retriever: TableRetriever = _built(retriever, self) or Retriever(
            self.store.catalog(), self.schema
        )
        self.reader: HistoryReader = _built(reader, self) or GuardedHistoryReader(
            self.guard, self.schema.columns
        )
        # ``level``: the forecast intervals' level (default 80%); ``decision``: how reasoning
        # answers are chosen from the forecast distribution (``foretab.analyze.probability``).
        self.analyzer: Analyzer = analyzer or RuleAnalyzer(decision)
        self.level = level
        self.future_mode = future
        self._model = model
        self._future: FutureSource | None = _built(future_source, self)
        #: which engine this is (``rules``, ``timefore``, ``vanilla``, ``hybrid``), for answers
        self.kind = "rules"

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
            self._future = future_source(
                self.future_mode, self.db, self.store, self._model, self.level
            )
        return self._future

    def _series_model(self) -> SeriesModel:
        """The model ``forecast()`` in SQL runs: the one this engine's questions use."""
        from foretab.forecast.source import ModelSource

        source = self.future if self.future_mode == "model" else None
        if isinstance(source, ModelSource):
            return source.model
        from foretab.forecast.store import load_store_model

        return load_store_model(self.store, self._model)

    def sql(self, sql: str | exp.Expression, params: Sequence[Any] | None = None) -> QueryResult:
        """Run one read-only SELECT through the engine's SQL guard (as ``POST /api/sql``).

        The guarded SQL offers ``forecast('table' [, horizon => N] [, level => p]
        [, entities => [...]])`` as a relation: the store model's forecasts, the numbers
        ``ask`` gives (docs/forecast-sql.md). Raises ``GuardError`` with the rule it broke.
        """
        return self.guard.execute(sql, params)

    def parse(self, question: str) -> Plan:
        return self._plan(question)

    def _plan(self, question: str) -> Plan:
        plan = self.planner.plan(question)
        if plan.metric is Metric.UNITS and self.schema.summed is None:
            raise QuestionError(
                f"this store's corpus ({self.schema.name}) measures "
                f"{self.schema.primary.name} only; ask about its {self.schema.primary.name}"
            )
        return plan if plan.wording == self.wording else replace(plan, wording=self.wording)

    def ask(self, question: str) -> Answer:
        """Answer ``question``; raises a ``ForetabError`` that says why when it cannot."""
        check_question(question)
        steps: list = []
        plan, seconds = _timed(lambda: self._plan(question))
        steps.extend(self._inner_steps())
        steps.append(PlanStep(self.planner.name, seconds))
        retrieval, seconds = _timed(lambda: self.retriever.retrieve(plan))
        steps.extend(self._inner_steps())
        steps.append(RetrieveStep(self.retriever.name, seconds, retrieval.matches))
        read, seconds = _timed(lambda: self.reader.read(plan, retrieval))
        steps.extend(self._inner_steps())
        steps.append(
            ReadStep(
                self.reader.name,
                seconds,
                read.sql,
                read.params,
                read.rows,
                read.truncated,
                read.history.dropped_rows,
            )
        )
        months = plan.future_months
        forecast = Forecast.nothing_needed()
        if months:
            source = self.future
            forecast, seconds = _timed(lambda: source.forecast(plan, read.history))
            steps.extend(self._inner_steps())
            steps.append(
                ForecastStep(
                    source.name,
                    seconds,
                    tuple(months),
                    forecast.level,
                    forecast.interval_method,
                    forecast.drift_per_month,
                )
            )
        analysis, seconds = _timed(lambda: self.analyzer.analyze(plan, read.history, forecast))
        steps.extend(self._inner_steps())
        steps.append(AnalyzeStep(self.analyzer.name, seconds, analysis.uncertainty))
        return Answer(
            question=question,
            answer=analysis.answer,
            text=analysis.text,
            task=plan.task,
            plan=plan,
            trace=Trace(tuple(steps)),
            history=read.history,
            forecast=forecast,
            engine=self.kind,
            probability=analysis.probability,
            decision=analysis.decision,
            intervals=analysis.intervals,
        )

    def _inner_steps(self) -> list[Step]:
        """Steps recorded inside the stage that just ran (``RecordsSteps``)."""
        out: list[Step] = []
        stages = (self.planner, self.retriever, self.reader, self._future, self.analyzer)
        for stage in stages:
            # What ``isinstance(stage, RecordsSteps)`` checks, without the runtime Protocol
            # machinery: it ran 25 times an ask and cost 1.4 ms of a warm ~17.
            take = getattr(stage, "take_steps", None)
            if callable(take):
                out.extend(take())
        return out


def _built(stage: T | Callable[[Engine], T] | None, engine: Engine) -> T | None:
    if stage is None:
        return None
    if callable(stage) and not hasattr(stage, "name"):
        return stage(engine)  # type: ignore[return-value]
    return stage  # type: ignore[return-value]


def _timed(work: Callable[[], T]) -> tuple[T, float]:
    started = time.perf_counter()
    result = work()
    return result, time.perf_counter() - started
