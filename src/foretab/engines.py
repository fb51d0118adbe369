"""The four engines of docs/design.md §2 behind one constructor.

``rules``, ``timefore``, ``vanilla`` and ``hybrid``::

    from foretab.engines import build_engine
    from foretab.llm import load_options, make_provider

    llm = make_provider(load_options(base_url="http://127.0.0.1:11434/v1", model="qwen3:30b"))
    with build_engine("corpus.duckdb", "timefore", llm=llm) as engine:
        print(engine.ask("What will the price of Poly Central Park in Jiangning, Nanjing be next month?").answer)

Each LLM engine is the same ``Engine`` with other stage implementations (the TimeFore
agents or the Vanilla baseline). ``hybrid`` asks the rules first and hands a question to
the TimeFore agents only when the rule planner cannot plan it — an unknown or ambiguous
entity stays the rules' error, and a question the rules answer sends no LLM request.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foretab.engine import Engine
from foretab.errors import ForetabError, QuestionError
from foretab.timefore.errors import EngineChoiceError

if TYPE_CHECKING:
    from foretab.core.answer import Answer
    from foretab.llm import LLMProvider
    from foretab.timefore.session import AgentSession, LLMUsage

ENGINES: tuple[str, ...] = ("rules", "timefore", "vanilla", "hybrid")
LLM_ENGINES = frozenset({"timefore", "vanilla", "hybrid"})
DEFAULT_TOOL_IMPUTER = "linear"


def check_engine(name: str) -> str:
    """``name`` if it is an engine, else an error listing them."""
    if name not in ENGINES:
        raise EngineChoiceError(f"unknown engine {name!r}; use one of {', '.join(ENGINES)}")
    return name


def no_llm_error(engine: str, cause: ForetabError | None = None) -> EngineChoiceError:
    """The error for an LLM engine asked for without an LLM."""
    detail = f" ({cause.message})" if cause is not None else ""
    return EngineChoiceError(
        f"--engine {engine} needs an LLM, and none is configured{detail}. Pass "
        "--llm-base-url URL --llm-model NAME (or set FORETAB_LLM_BASE_URL and "
        "FORETAB_LLM_MODEL), or use --engine rules, which needs none",
        suggestions=("--engine rules",),
    )


def _series_model(engine: Engine, name: str | None) -> Any:
    """The store's fitted model for the forecasting tool (or a named local forecaster)."""
    if name in {"naive", "drift", "autoets", "autotheta"}:
        from foretab.timefore.forecaster import RegistryModel

        return RegistryModel(name)
    from foretab.errors import ForecastError
    from foretab.forecast.store import load_store_model

    try:
        return load_store_model(engine.store, name)
    except ForecastError as error:
        raise ForecastError(
            f"the forecasting tool has no model: {error.message}",
            suggestions=(*error.suggestions, "or pass --tool-model drift (needs no training)"),
        ) from None


class _Examples:
    """Few-shot examples and the question-type classifier for one engine."""

    def __init__(self, engine: Engine, fewshot: Path | None, tool: Any) -> None:
        from foretab.core.plan import Task
        from foretab.timefore.analyzer import QuestionTypeClassifier
        from foretab.timefore.examples import shipped_examples

        shipped = shipped_examples(engine.reference)
        self.examples = shipped
        questions = [e.question for e in shipped]
        tasks = [e.task for e in shipped]
        if fewshot is not None:
            from foretab.bench.qa_items import read_items

            items = read_items(fewshot)
            trained = self._from_items(engine, items, tool)
            kinds = {e.task for e in trained}
            # The shipped set fills any type the split has no usable example of.
            self.examples = trained + [e for e in shipped if e.task not in kinds]
            questions = [i.question for i in items] or questions
            tasks = [Task(i.task) for i in items] or tasks
        self.classifier = QuestionTypeClassifier(questions, tasks)

    @staticmethod
    def _from_items(engine: Engine, items: Sequence[Any], tool: Any) -> list[Any]:
        from foretab.core.catalog import Retrieval
        from foretab.core.series import Forecast
        from foretab.read import GivenSQLReader
        from foretab.timefore.examples import train_examples
        from foretab.timefore.forecaster import data_for, parse_data

        def history_of(plan: Any, sql: str) -> Any:
            reader = GivenSQLReader(engine.guard, lambda _plan: sql, cols=engine.schema.columns)
            return reader.read(plan, Retrieval(())).history

        def forecast_of(plan: Any, history: Any) -> Forecast:
            points = {
                ref: tool(parse_data(data_for(history, ref, plan.reference_month)))
                for ref in plan.entities
            }
            return Forecast("example", points)

        rules = engine.planner
        return train_examples(items, rules.plan, history_of, forecast_of)


def _agents(
    engine: Engine,
    llm: LLMProvider,
    *,
    fewshot: Path | None,
    max_sql_iterations: int,
    tool_model: str | None,
    tool_imputer: str,
    overrides: dict[str, Any],
    vanilla: bool,
) -> AgentSession:
    """Replace ``engine``'s stages by the TimeFore agents (or the Vanilla baseline)."""
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

    session = AgentSession(llm)
    tool = ImputeThenPredict(
        lambda: _series_model(engine, tool_model),
        get_imputer(tool_imputer),
        engine.reference,
        tool_model or "store",
    )
    shots = _Examples(engine, fewshot, tool)
    catalog = engine.store.catalog()
    projects = [EntityRef(p.outer, p.inner, p.name) for p in engine.store.entities()]
    engine.planner = AgentPlanner(engine.planner, session)

    def chosen(key: str, default: Any) -> Any:
        value = overrides.get(key)
        if value is None:
            return default
        return value(engine) if callable(value) and not hasattr(value, "name") else value

    if vanilla:
        engine.retriever = chosen("retriever", BM25Captions(catalog))
        engine.reader = chosen("reader", MentionedProjectsReader(engine.guard, projects))
        engine._future = chosen("future_source", LLMPredicts())
        engine.analyzer = chosen("analyzer", VanillaAnalyzer(session, shots.examples))
    else:
        engine.retriever = chosen("retriever", CaptionAgent(session, catalog, shots.examples))
        engine.reader = chosen(
            "reader",
            SQLAgentReader(
                session, engine.guard, shots.examples, ProjectResolver(projects),
                max_iterations=max_sql_iterations,
            ),
        )  # fmt: skip
        engine._future = chosen("future_source", ToolForecaster(session, tool, shots.examples))
        engine.analyzer = chosen("analyzer", LLMAnalyzer(session, shots.examples, shots.classifier))
    return session


def build_engine(
    db: str,
    engine: str = "rules",
    *,
    llm: LLMProvider | None = None,
    future: str = "model",
    model: str | None = None,
    fewshot: str | Path | None = None,
    max_sql_iterations: int = 25,
    tool_model: str | None = None,
    tool_imputer: str = DEFAULT_TOOL_IMPUTER,
    retriever: Any = None,
    reader: Any = None,
    future_source: Any = None,
    analyzer: Any = None,
) -> Engine | HybridEngine:
    """The engine ``engine`` over store ``db``.

    ``llm`` is required for ``timefore``, ``vanilla`` and ``hybrid``. ``retriever`` /
    ``reader`` / ``future_source`` / ``analyzer`` replace single stages (instances or
    ``lambda engine: ...`` factories), as the benchmark's ablations do. ``fewshot`` is a
    benchmark split (``foretab bench build`` → ``DIR/train.jsonl``) to draw the prompts'
    examples from; default: the shipped examples.
    """
    check_engine(engine)
    if engine in LLM_ENGINES and llm is None:
        raise no_llm_error(engine)
    overrides = {
        "retriever": retriever,
        "reader": reader,
        "future_source": future_source,
        "analyzer": analyzer,
    }
    fewshot_path = Path(fewshot) if fewshot is not None else None
    if engine == "rules":
        return Engine(db, future=future, model=model, **overrides)  # type: ignore[arg-type]
    assert llm is not None
    if engine == "hybrid":
        rules = Engine(db, future=future, model=model, **overrides)  # type: ignore[arg-type]
        rules.kind = "hybrid:rules"

        def agents() -> LLMEngine:
            built = build_engine(
                db, "timefore", llm=llm, future=future, model=model, fewshot=fewshot_path,
                max_sql_iterations=max_sql_iterations, tool_model=tool_model,
                tool_imputer=tool_imputer, **overrides,
            )  # fmt: skip
            assert isinstance(built, LLMEngine)
            built.kind = "hybrid:timefore"
            return built

        return HybridEngine(rules, agents)
    built = LLMEngine(db, future=future, model=model)  # type: ignore[arg-type]
    try:
        if overrides["future_source"] is None and future != "model":
            overrides["future_source"] = built.future  # oracle / persistence ablations
        session = _agents(
            built, llm, fewshot=fewshot_path, max_sql_iterations=max_sql_iterations,
            tool_model=tool_model, tool_imputer=tool_imputer, overrides=overrides,
            vanilla=engine == "vanilla",
        )  # fmt: skip
    except BaseException:
        built.close()
        raise
    built.kind = engine
    built.llm_session = session  # type: ignore[attr-defined]
    return built


class LLMEngine(Engine):
    """An ``Engine`` whose stages talk to an LLM: failures carry the LLM steps so far.

    Whatever a model sends, the question ends in a ``ForetabError``: an unexpected
    exception inside an agent becomes an ``AgentError`` naming it (the cause is chained).
    """

    llm_session: AgentSession

    def ask(self, question: str) -> Answer:
        from foretab.core.answer import _step_doc
        from foretab.timefore.errors import AgentError

        try:
            answer = super().ask(question)
            return _opened(answer, self.analyzer)
        except ForetabError as error:
            failure: ForetabError = error
        except Exception as error:
            failure = AgentError(
                f"the {self.kind} engine failed on the LLM's output ({type(error).__name__}: "
                f"{error}); see the steps in `foretab ask ... --json`"
            )
            failure.__cause__ = error
        session = getattr(self, "llm_session", None)
        if session is not None:
            failure.steps = [  # type: ignore[attr-defined]
                _step_doc(s).model_dump(mode="json") for s in session.question_steps
            ]
        raise failure


def _opened(answer: Answer, analyzer: object) -> Answer:
    """An open plan's answer reports the question type the classifier chose."""
    from dataclasses import replace

    from foretab.timefore.planner import is_open

    if not is_open(answer.plan):
        return answer
    task = getattr(analyzer, "last_type", None) or answer.task
    return replace(answer, plan=replace(answer.plan, task=task), task=task)


class HybridEngine:
    """Rules first; the TimeFore agents (built on first need) for what the rules cannot plan."""

    kind = "hybrid"

    def __init__(self, rules: Engine, agents: Any) -> None:
        self.rules = rules
        self._make_agents = agents
        self._agents: LLMEngine | None = None
        self.last_engine = "rules"

    @property
    def agents(self) -> LLMEngine:
        if self._agents is None:
            self._agents = self._make_agents()
        return self._agents

    @property
    def store(self) -> Any:
        return self.rules.store

    @property
    def guard(self) -> Any:
        return self.rules.guard

    @property
    def future(self) -> Any:
        return self.rules.future

    @property
    def llm_session(self) -> AgentSession | None:
        if self.last_engine != "timefore" or self._agents is None:
            return None
        return getattr(self._agents, "llm_session", None)

    def ask(self, question: str) -> Answer:
        from foretab.timefore.planner import is_entity_error

        try:
            self.rules.planner.plan(question)
        except QuestionError as error:
            if is_entity_error(error):
                raise
            self.last_engine = "timefore"
            return self.agents.ask(question)
        self.last_engine = "rules"
        return self.rules.ask(question)

    def close(self) -> None:
        self.rules.close()
        if self._agents is not None:
            self._agents.close()

    def __enter__(self) -> HybridEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def last_usage(engine: object) -> LLMUsage | None:
    """LLM calls, tokens and seconds of the engine's last question (None: no LLM used)."""
    session = getattr(engine, "llm_session", None)
    return None if session is None else session.usage
