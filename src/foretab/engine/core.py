"""``Engine.ask``: plan → retrieve → read → forecast → analyze, each stage one implementation.

An engine is a ``StoreContext`` (what every engine over the store shares), a
``StoreSession`` (its own connections) and one ``Stages`` — the implementations of the
stage interfaces in ``foretab.core.stages``. The rule stages are the default; the
benchmark's ablations and the LLM agents are other ``Stages``, composed before the engine
is built (``foretab.engine.build``) — ``ask`` itself has no switches::

    with Engine.open("corpus.duckdb") as engine:
        answer = engine.ask("What will the price of Poly Central Park in Jiangning, Nanjing be next month?")
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

from foretab.core.answer import Answer
from foretab.core.months import Month
from foretab.core.plan import Metric, Plan
from foretab.core.series import Forecast
from foretab.core.stages import Analyzer, FutureSource, HistoryReader, Planner, TableRetriever
from foretab.core.trace import (
    AnalyzeStep,
    ForecastStep,
    PlanStep,
    ReadStep,
    RetrieveStep,
    Step,
    Trace,
)
from foretab.engine.context import StoreContext, StoreSession
from foretab.errors import QueryError, QuestionError
from foretab.forecast.sources import LazySource
from foretab.limits import check_question

if TYPE_CHECKING:
    from sqlglot import exp

    from foretab.converse import Conversation
    from foretab.corpus.schema import CorpusSchema
    from foretab.forecast.source import SeriesModel
    from foretab.sql.guard import GuardedExecutor
    from foretab.sql.result import QueryResult
    from foretab.store import HistoryStore

T = TypeVar("T")


@dataclass(frozen=True)
class Stages:
    """One implementation of each stage, composed before an engine is built."""

    planner: Planner
    retriever: TableRetriever
    reader: HistoryReader
    future: FutureSource
    analyzer: Analyzer


class Engine:
    """Answers questions over one store; build once, ask many times (indexes stay warm).

    Most callers want ``Engine.open(db)`` (the rule stages) or
    ``foretab.engine.build_engine(db, kind, ...)`` (any engine); the constructor takes
    stages already composed.
    """

    def __init__(self, session: StoreSession, stages: Stages, *, kind: str = "rules") -> None:
        self.session = session
        self.stages = stages
        # forecast() in SQL forecasts with the model this engine's questions use, reached
        # through a weak reference: a session holding its engine would make every engine a
        # reference cycle, and one dropped without ``close`` would keep its guard worker,
        # store connections and indexes until the cyclic collector's next full pass.
        session.forecasts.use(_while_alive(self.series_model))
        #: which engine this is (``rules``, ``timefore``, ``vanilla``, ``hybrid:…``), for answers
        self.kind = kind

    @classmethod
    def open(cls, db: str | StoreContext, **options: Any) -> Engine:
        """The rules engine over ``db`` (a ``--db`` string, or a context to share).

        ``options`` are ``foretab.engine.rules.rule_stages``'s (``future``, ``model``,
        ``level``, ``decision``, single-stage replacements) and the guard's ``max_rows`` /
        ``timeout_s``.
        """
        from foretab.engine.build import build_engine

        engine = build_engine(db, "rules", **options)
        assert isinstance(engine, Engine)
        return engine

    # What every engine over the store shares.
    @property
    def context(self) -> StoreContext:
        return self.session.context

    @property
    def db(self) -> str:
        return self.context.db

    @property
    def schema(self) -> CorpusSchema:
        return self.context.schema

    @property
    def reference(self) -> Month:
        return self.context.reference

    # This engine's own connections and stages.
    @property
    def store(self) -> HistoryStore:
        return self.session.store

    @property
    def guard(self) -> GuardedExecutor:
        return self.session.guard

    @property
    def planner(self) -> Planner:
        return self.stages.planner

    @property
    def retriever(self) -> TableRetriever:
        return self.stages.retriever

    @property
    def reader(self) -> HistoryReader:
        return self.stages.reader

    @property
    def analyzer(self) -> Analyzer:
        return self.stages.analyzer

    @property
    def future(self) -> FutureSource:
        """The future source, loaded now if it is loaded on first use."""
        source = self.stages.future
        return source.loaded() if isinstance(source, LazySource) else source

    def series_model(self) -> SeriesModel:
        """The model ``forecast()`` in SQL runs: the one this engine's questions use.

        Never the oracle's source: that would open the future store.
        """
        from foretab.forecast.source import ModelSource
        from foretab.forecast.store import load_store_model

        source = self.stages.future
        if isinstance(source, LazySource) and source.mode == "model":
            source = source.loaded()
        if isinstance(source, ModelSource):
            return source.model
        return load_store_model(
            self.store, source.model if isinstance(source, LazySource) else None
        )

    def sql(self, sql: str | exp.Expression, params: Sequence[Any] | None = None) -> QueryResult:
        """Run one read-only SELECT through the engine's SQL guard (as ``POST /api/sql``).

        The guarded SQL offers ``forecast('table' [, horizon => N] [, level => p]
        [, entities => [...]])`` as a relation: the store model's forecasts, the numbers
        ``ask`` gives (docs/forecast-sql.md). Raises ``GuardError`` with the rule it broke.
        """
        return self.guard.execute(sql, params)

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def conversation(self, *, max_turns: int | None = None) -> Conversation:
        """A new conversation over this engine: follow-ups and clarifying choices.

        docs/design.md §4.3::

            talk = engine.conversation()
            talk.ask("What was the average price of Poly Banhuyuan in Jiangning, Nanjing in 2021?")
            talk.ask("and next year?").answer.answer
        """
        from foretab.converse import Conversation

        return Conversation(self) if max_turns is None else Conversation(self, max_turns=max_turns)

    def parse(self, question: str) -> Plan:
        return self.checked(self.planner.plan(question))

    def checked(self, plan: Plan) -> Plan:
        """``plan`` in this store's terms, or an error if it asks for a measure the store lacks."""
        if plan.metric is Metric.UNITS and self.schema.summed is None:
            raise QuestionError(
                f"this store's corpus ({self.schema.name}) measures "
                f"{self.schema.primary.name} only; ask about its {self.schema.primary.name}"
            )
        wording = self.context.wording
        # Any planner's plan is worded in the corpus's own terms ("price", "units sold").
        return plan if plan.wording == wording else replace(plan, wording=wording)

    def ask(self, question: str) -> Answer:
        """Answer ``question``; raises a ``ForetabError`` that says why when it cannot."""
        check_question(question)
        plan, seconds = timed(lambda: self.parse(question))
        steps = [*self._inner_steps(), PlanStep(self.planner.name, seconds)]
        return self.answer(question, plan, steps)

    def answer(self, question: str, plan: Plan, steps: list[Step] | None = None) -> Answer:
        """Answer ``question`` from the plan already made of it (``steps``: the plan's)."""
        steps = list(steps or ())
        retrieval, seconds = timed(lambda: self.retriever.retrieve(plan))
        steps.extend(self._inner_steps())
        steps.append(RetrieveStep(self.retriever.name, seconds, retrieval.matches))
        read, seconds = timed(lambda: self.reader.read(plan, retrieval))
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
            forecast, seconds = timed(lambda: source.forecast(plan, read.history))
            steps.extend(self._inner_steps())
            steps.append(
                ForecastStep(
                    # a units question's forecast names the units model, not the source's
                    forecast.source if plan.metric is Metric.UNITS else source.name,
                    seconds,
                    tuple(months),
                    forecast.level,
                    forecast.interval_method,
                    forecast.drift_per_month,
                )
            )
        analysis, seconds = timed(lambda: self.analyzer.analyze(plan, read.history, forecast))
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
            scenario_share=analysis.scenario_share,
            decision=analysis.decision,
            intervals=analysis.intervals,
        )

    def _inner_steps(self) -> list[Step]:
        """Steps recorded inside the stage that just ran (``RecordsSteps``)."""
        out: list[Step] = []
        stages = self.stages
        future = stages.future
        if isinstance(future, LazySource):
            future = future.if_loaded()
        for stage in (stages.planner, stages.retriever, stages.reader, future, stages.analyzer):
            # What ``isinstance(stage, RecordsSteps)`` checks, without the runtime Protocol
            # machinery: it ran 25 times an ask and cost 1.4 ms of a warm ~17.
            take = getattr(stage, "take_steps", None)
            if callable(take):
                out.extend(take())
        return out


def _while_alive(method: Callable[[], T]) -> Callable[[], T]:
    """``method`` called through a weak reference to its object (an engine)."""
    ref = weakref.WeakMethod(method)  # type: ignore[arg-type]

    def call() -> T:
        bound = ref()
        if bound is None:
            raise QueryError(
                "forecast() in SQL needs the engine this SQL guard belongs to, and that "
                "engine is gone; keep the engine (Engine.open(...)) while you use its guard"
            )
        return bound()

    return call


def timed(work: Callable[[], T]) -> tuple[T, float]:
    """``work()`` and the seconds it took."""
    started = time.perf_counter()
    result = work()
    return result, time.perf_counter() - started
