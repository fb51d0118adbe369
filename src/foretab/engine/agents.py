"""The TimeFore agents and the Vanilla baseline as stages (docs/design.md §7, ``docs/design.md``).

Each LLM engine is the rules engine's session with other stages: composed here, before the
engine is built, from the rule planner (the agents' fallback and the few-shot examples'
planner), the engine's guard, the LLM session and the forecasting tool.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foretab.engine.context import StoreSession
from foretab.engine.core import Stages
from foretab.engine.rules import StageChoice, chosen, rule_planner
from foretab.errors import ForecastError

if TYPE_CHECKING:
    from foretab.core.stages import FutureSource, Planner
    from foretab.llm import LLMProvider
    from foretab.timefore.session import AgentSession

DEFAULT_TOOL_IMPUTER = "linear"
#: Local models the forecasting tool can use without a trained store model.
_UNTRAINED_TOOL_MODELS = frozenset({"naive", "drift", "autoets", "autotheta"})


def _series_model(session: StoreSession, name: str | None) -> Any:
    """The store's fitted model for the forecasting tool (or a named local forecaster)."""
    if name in _UNTRAINED_TOOL_MODELS:
        from foretab.timefore.forecaster import RegistryModel

        return RegistryModel(name)
    from foretab.forecast.store import load_store_model

    try:
        return load_store_model(session.store, name)
    except ForecastError as error:
        raise ForecastError(
            f"the forecasting tool has no model: {error.message}",
            suggestions=(*error.suggestions, "or pass --tool-model drift (needs no training)"),
        ) from None


class _Examples:
    """Few-shot examples and the question-type classifier for one engine."""

    def __init__(
        self, session: StoreSession, planner: Planner, fewshot: Path | None, tool: Any
    ) -> None:
        from foretab.core.plan import Task
        from foretab.timefore.analyzer import QuestionTypeClassifier
        from foretab.timefore.examples import shipped_examples

        shipped = shipped_examples(session.context.reference)
        self.examples = shipped
        questions = [e.question for e in shipped]
        tasks = [e.task for e in shipped]
        if fewshot is not None:
            from foretab.dataset import read_items

            items = read_items(fewshot)
            trained = self._from_items(session, planner, items, tool)
            kinds = {e.task for e in trained}
            # The shipped set fills any type the split has no usable example of.
            self.examples = trained + [e for e in shipped if e.task not in kinds]
            questions = [i.question for i in items] or questions
            tasks = [Task(i.task) for i in items] or tasks
        self.classifier = QuestionTypeClassifier(questions, tasks)

    @staticmethod
    def _from_items(
        session: StoreSession, planner: Planner, items: Sequence[Any], tool: Any
    ) -> list[Any]:
        from foretab.core.catalog import Retrieval
        from foretab.core.series import Forecast
        from foretab.read import GivenSQLReader
        from foretab.timefore.examples import train_examples
        from foretab.timefore.forecaster import data_for, parse_data

        def history_of(plan: Any, sql: str) -> Any:
            reader = GivenSQLReader(session.guard, lambda _plan: sql, cols=session.schema.columns)
            return reader.read(plan, Retrieval(())).history

        def forecast_of(plan: Any, history: Any) -> Forecast:
            points = {
                ref: tool(parse_data(data_for(history, ref, plan.reference_month)))
                for ref in plan.entities
            }
            return Forecast("example", points)

        return train_examples(items, planner.plan, history_of, forecast_of)


def agent_stages(
    session: StoreSession,
    llm: LLMProvider,
    *,
    vanilla: bool,
    fewshot: Path | None = None,
    max_sql_iterations: int = 25,
    tool_model: str | None = None,
    tool_imputer: str = DEFAULT_TOOL_IMPUTER,
    retriever: StageChoice[Any] = None,
    reader: StageChoice[Any] = None,
    future_source: StageChoice[FutureSource] = None,
    analyzer: StageChoice[Any] = None,
) -> tuple[Stages, AgentSession]:
    """The TimeFore agents' stages (or the Vanilla baseline's) and their LLM session.

    A stage passed in (an ablation's golden stage, or the oracle / persistence future)
    replaces the agent's.
    """
    from foretab.core.plan import EntityRef
    from foretab.forecast.registry import get_imputer
    from foretab.timefore.analyzer import LLMAnalyzer
    from foretab.timefore.captions import CaptionAgent
    from foretab.timefore.forecaster import ImputeThenPredict, ToolForecaster
    from foretab.timefore.planner import AgentPlanner
    from foretab.timefore.session import AgentSession
    from foretab.timefore.sql_agent import ProjectResolver, SQLAgentReader
    from foretab.timefore.vanilla import (
        BM25Captions,
        LLMPredicts,
        MentionedProjectsReader,
        VanillaAnalyzer,
    )

    context = session.context
    agent_session = AgentSession(llm)
    rules = rule_planner(session)
    tool = ImputeThenPredict(
        lambda: _series_model(session, tool_model),
        get_imputer(tool_imputer),
        context.reference,
        tool_model or "store",
    )
    shots = _Examples(session, rules, fewshot, tool)
    projects = [EntityRef(p.outer, p.inner, p.name) for p in context.entities]
    planner = AgentPlanner(rules, agent_session)
    if vanilla:
        stages = Stages(
            planner=planner,
            retriever=chosen(retriever, session) or BM25Captions(context.catalog),
            reader=chosen(reader, session) or MentionedProjectsReader(session.guard, projects),
            future=chosen(future_source, session) or LLMPredicts(),
            analyzer=chosen(analyzer, session) or VanillaAnalyzer(agent_session, shots.examples),
        )
        return stages, agent_session
    stages = Stages(
        planner=planner,
        retriever=chosen(retriever, session)
        or CaptionAgent(agent_session, context.catalog, shots.examples),
        reader=chosen(reader, session)
        or SQLAgentReader(
            agent_session,
            session.guard,
            shots.examples,
            ProjectResolver(projects),
            max_iterations=max_sql_iterations,
        ),
        future=chosen(future_source, session)
        or ToolForecaster(agent_session, tool, shots.examples),
        analyzer=chosen(analyzer, session)
        or LLMAnalyzer(agent_session, shots.examples, shots.classifier),
    )
    return stages, agent_session
