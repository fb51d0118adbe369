"""The four engines of docs/design.md §2 (``docs/design.md``) behind one constructor.

``rules``, ``timefore``, ``vanilla`` and ``hybrid``::

    from foretab.engine import build_engine
    from foretab.llm import LLMSettings

    llm = LLMSettings(base_url="http://127.0.0.1:11434/v1", model="qwen3:30b").provider()
    with build_engine("corpus.duckdb", "timefore", llm=llm) as engine:
        print(engine.ask("What will the price of Poly Central Park in Jiangning, Nanjing be next month?").answer)

Every engine is an ``Engine`` over a ``StoreContext`` with a set of stages composed before
it is built: the rule stages, or the TimeFore agents / the Vanilla baseline
(``foretab.engine.agents``). ``hybrid`` asks the rules first and hands a question to the
TimeFore agents only when the rule planner cannot plan it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from foretab.engine.context import StoreContext, StoreSession
from foretab.engine.core import Engine
from foretab.engine.hybrid import HybridEngine
from foretab.engine.llm import LLMEngine
from foretab.engine.rules import rule_stages
from foretab.errors import ForetabError
from foretab.timefore.errors import EngineChoiceError

if TYPE_CHECKING:
    from foretab.llm import LLMProvider, LLMSettings

ENGINES: tuple[str, ...] = ("rules", "timefore", "vanilla", "hybrid")
LLM_ENGINES = frozenset({"timefore", "vanilla", "hybrid"})


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


def provider_for(engine: str, settings: LLMSettings | None) -> LLMProvider | None:
    """The LLM provider an engine needs (None for ``rules``), or an error naming the flags."""
    from foretab.llm import LLMNotConfiguredError, LLMSettings

    check_engine(engine)
    if engine not in LLM_ENGINES:
        return None
    try:
        return (settings or LLMSettings()).provider()
    except LLMNotConfiguredError:
        raise no_llm_error(engine) from None


def _session(db: str | StoreContext, max_rows: int, timeout_s: float) -> StoreSession:
    if isinstance(db, StoreContext):
        return db.connect(max_rows=max_rows, timeout_s=timeout_s)
    return StoreContext.open_session(db, max_rows=max_rows, timeout_s=timeout_s)


def build_engine(
    db: str | StoreContext,
    engine: str = "rules",
    *,
    llm: LLMProvider | None = None,
    future: str = "model",
    model: str | None = None,
    level: float | None = None,
    decision: str | None = None,
    max_rows: int = 10_000,
    timeout_s: float = 5.0,
    fewshot: str | Path | None = None,
    max_sql_iterations: int = 25,
    tool_model: str | None = None,
    tool_imputer: str | None = None,
    planner: Any = None,
    retriever: Any = None,
    reader: Any = None,
    future_source: Any = None,
    analyzer: Any = None,
) -> Engine | HybridEngine:
    """The engine ``engine`` over store ``db`` (a ``--db`` string, or a context to share).

    ``llm`` is required for ``timefore``, ``vanilla`` and ``hybrid``. ``retriever`` /
    ``reader`` / ``future_source`` / ``analyzer`` (and, for ``rules``, ``planner``) replace
    single stages — instances, or factories ``lambda session: ...`` given the engine's
    ``StoreSession`` — as the benchmark's ablations do. ``fewshot`` is a benchmark split
    (``foretab bench build`` → ``DIR/train.jsonl``) to draw the prompts' examples from;
    default: the shipped examples.
    """
    check_engine(engine)
    if engine in LLM_ENGINES and llm is None:
        raise no_llm_error(engine)
    replaced = {
        "retriever": retriever,
        "reader": reader,
        "future_source": future_source,
        "analyzer": analyzer,
    }
    session = _session(db, max_rows, timeout_s)
    try:
        if engine in ("rules", "hybrid"):
            rules = Engine(
                session,
                rule_stages(
                    session, future=future, model=model, level=level,  # type: ignore[arg-type]
                    decision=decision, planner=planner, **replaced,
                ),
            )  # fmt: skip
            if engine == "rules":
                return rules
        assert llm is not None
        agent_options = {
            "fewshot": Path(fewshot) if fewshot is not None else None,
            "max_sql_iterations": max_sql_iterations,
            "tool_model": tool_model,
            **({"tool_imputer": tool_imputer} if tool_imputer else {}),
        }
        if engine == "hybrid":
            rules.kind = "hybrid:rules"  # bound above for both kinds it serves

            def agents() -> LLMEngine:
                own = session.context.connect(max_rows=max_rows, timeout_s=timeout_s)
                try:
                    built = _llm_engine(own, llm, "timefore", future, replaced, agent_options)
                except BaseException:
                    own.close()
                    raise
                built.kind = "hybrid:timefore"
                return built

            return HybridEngine(rules, agents)
        return _llm_engine(session, llm, engine, future, replaced, agent_options)
    except BaseException:
        session.close()
        raise


def _llm_engine(
    session: StoreSession,
    llm: LLMProvider,
    kind: str,
    future: str,
    replaced: dict[str, Any],
    agent_options: dict[str, Any],
) -> LLMEngine:
    """An LLM engine over ``session``.

    The oracle and persistence ablations replace the agents' forecasting tool with the rule
    engine's future source, as they replace the rule engine's model.
    """
    from foretab.engine.agents import agent_stages
    from foretab.engine.rules import model_future

    if replaced["future_source"] is None and future != "model":
        replaced = {**replaced, "future_source": model_future(session, future, None, None)}  # type: ignore[arg-type]
    stages, agent_session = agent_stages(
        session, llm, vanilla=kind == "vanilla", **agent_options, **replaced
    )
    return LLMEngine(session, stages, agent_session, kind=kind)
