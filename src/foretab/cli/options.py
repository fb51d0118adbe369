"""The engine and LLM flags every command that builds an engine or an LLM shares.

A command takes them as one value, never as six loose parameters::

    @app.command()
    @llm_options
    def cmd(question: str, llm: LLMSettings) -> None:       # --llm-base-url, --llm-model, ...
        provider = llm.provider()

    @app.command()
    @engine_options
    def ask(question: str, engine: EngineChoice) -> None:   # --engine, --fewshot, ... + --llm-*
        with open_engine(db, engine) as built: ...

    @app.command()
    @tableqa_options
    @llm_options
    def cmd(question: str, tableqa: TableQAChoice, llm: LLMSettings) -> None:  # --pipeline, ...
        qa = tableqa.build(llm.provider())

The decorators add the flags to the command's signature (Typer reads it) and hand the
command the frozen value they make. Nothing heavy is imported here.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from foretab.engine.choice import EngineChoice
from foretab.llm.settings import LLMSettings

if TYPE_CHECKING:
    from foretab.llm.provider import LLMProvider
    from foretab.tableqa import TableQA

F = TypeVar("F", bound=Callable[..., Any])

_ENGINE_PANEL = "Engine"
_LLM_PANEL = "LLM endpoint"
_TABLEQA_PANEL = "Table QA"

DecisionOption = Annotated[
    str,
    typer.Option(
        "--decision",
        help="Reasoning answers: 'balanced' (default: the highest expected mean of being "
        "exactly right and F1), 'most-probable' (the answer most likely exactly right under "
        "the forecast distribution), 'max-f1' (the highest expected F1 of a listed set) or "
        "'point' (the point forecasts' verdict).",
    ),
]
#: ``foretab.analyze.probability.DEFAULT_DECISION``, written out so that ``--help`` does not
#: import the analyzer (a test holds the two equal).
DEFAULT_DECISION_NAME = "balanced"

EngineOption = Annotated[
    str,
    typer.Option(
        "--engine",
        help="rules (default, no LLM), timefore (the paper's LLM agents), vanilla (the "
        "paper's LLM-only baseline) or hybrid (rules first, TimeFore for questions the "
        "rules cannot plan). The LLM engines need --llm-base-url and --llm-model.",
        rich_help_panel=_ENGINE_PANEL,
    ),
]

#: The ``--llm-*`` flags: parameter name → (annotation, default); ``LLMSettings`` field =
#: the name without ``llm_``.
_LLM_FLAGS: dict[str, tuple[Any, Any]] = {
    "llm_base_url": (
        Annotated[
            str | None,
            typer.Option(
                "--llm-base-url",
                help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1 (Ollama), "
                "http://127.0.0.1:8000/v1 (vLLM). Default: $FORETAB_LLM_BASE_URL. The API key "
                "is read from $FORETAB_LLM_API_KEY.",
                rich_help_panel=_LLM_PANEL,
            ),
        ],
        None,
    ),
    "llm_model": (
        Annotated[
            str | None,
            typer.Option(
                "--llm-model",
                help="Model name as the server knows it. Default: $FORETAB_LLM_MODEL.",
                rich_help_panel=_LLM_PANEL,
            ),
        ],
        None,
    ),
    "llm_cache": (
        Annotated[
            Path | None,
            typer.Option(
                "--llm-cache",
                help="SQLite file caching replies by the full request: reruns cost no calls.",
                rich_help_panel=_LLM_PANEL,
            ),
        ],
        None,
    ),
    "llm_config": (
        Annotated[
            Path | None,
            typer.Option(
                "--llm-config",
                help="TOML file with LLM options (an llm table: base_url, model, api_key_env, "
                "temperature, max_tokens, timeout_s, max_retries, max_calls_per_question, "
                "...). Default: $FORETAB_LLM_CONFIG.",
                rich_help_panel=_LLM_PANEL,
            ),
        ],
        None,
    ),
    "llm_record": (
        Annotated[
            Path | None,
            typer.Option(
                "--llm-record",
                help="Append every request and reply to this JSONL transcript.",
                rich_help_panel=_LLM_PANEL,
            ),
        ],
        None,
    ),
    "llm_replay": (
        Annotated[
            Path | None,
            typer.Option(
                "--llm-replay",
                help="Answer from a recorded transcript instead of a server (a request not in "
                "it is an error).",
                rich_help_panel=_LLM_PANEL,
            ),
        ],
        None,
    ),
}

#: The agents' flags besides ``--engine``: parameter name → (annotation, default).
_AGENT_FLAGS: dict[str, tuple[Any, Any]] = {
    "fewshot": (
        Annotated[
            Path | None,
            typer.Option(
                "--fewshot",
                help="Draw the LLM prompts' few-shot examples (and train the question-type "
                "classifier) from this split of `foretab bench build` (DIR/train.jsonl). "
                "Default: the shipped examples.",
                rich_help_panel=_ENGINE_PANEL,
            ),
        ],
        None,
    ),
    "max_sql_iterations": (
        Annotated[
            int,
            typer.Option(
                "--max-sql-iterations",
                min=1,
                help="TimeFore: LLM calls allowed to write and repair the history SQL (paper: 25).",
                rich_help_panel=_ENGINE_PANEL,
            ),
        ],
        25,
    ),
    "tool_model": (
        Annotated[
            str | None,
            typer.Option(
                "--tool-model",
                help="TimeFore: model behind imputationThenPredictionTool (default: the "
                "store's trained forecaster; naive, drift, autoets or autotheta need no "
                "training).",
                rich_help_panel=_ENGINE_PANEL,
            ),
        ],
        None,
    ),
}


def _settings(values: dict[str, Any]) -> LLMSettings:
    return LLMSettings(**{name.removeprefix("llm_"): value for name, value in values.items()})


def llm_options(command: F) -> F:
    """Give ``command`` the ``--llm-*`` flags, as its parameter ``llm: LLMSettings``."""
    return _grouped(command, "llm", _LLM_FLAGS, _settings)


def engine_options(command: F) -> F:
    """Give ``command`` ``--engine``, the agents' and the ``--llm-*`` flags, as ``engine``.

    The command's parameter ``engine: EngineChoice`` receives them as one value.
    """
    flags = {"engine": (EngineOption, "rules"), **_AGENT_FLAGS, **_LLM_FLAGS}

    def choice(values: dict[str, Any]) -> EngineChoice:
        llm = _settings({k: values.pop(k) for k in _LLM_FLAGS})
        return EngineChoice(kind=values.pop("engine"), llm=llm, **values)

    return _grouped(command, "engine", flags, choice)


#: The table-QA pipelines (LyS PRESTA, docs/tableqa.md); ``foretab.tableqa.Pipeline``'s values.
TABLEQA_PIPELINES = ("ag", "ag+cs", "ag+ecs", "ag+ecs+cf")

#: The table-QA flags of ``foretab tableqa`` and ``foretab bench databench``.
_TABLEQA_FLAGS: dict[str, tuple[Any, Any]] = {
    "pipeline": (
        Annotated[
            str,
            typer.Option(
                "--pipeline",
                help="ag (answer generator only), ag+cs (+ column selector), ag+ecs (+ enhanced "
                "selector: types and values), ag+ecs+cf (+ code fixer).",
                rich_help_panel=_TABLEQA_PANEL,
            ),
        ],
        "ag+ecs+cf",
    ),
    "fix_attempts": (
        Annotated[
            int,
            typer.Option(
                "--fix-attempts",
                min=0,
                help="Code-fixer rounds (ag+ecs+cf).",
                rich_help_panel=_TABLEQA_PANEL,
            ),
        ],
        1,
    ),
    "timeout": (
        Annotated[
            float,
            typer.Option(
                "--timeout",
                min=1.0,
                help="Wall seconds per sandboxed run.",
                rich_help_panel=_TABLEQA_PANEL,
            ),
        ],
        30.0,
    ),
    "allow_weak_sandbox": (
        Annotated[
            bool,
            typer.Option(
                "--allow-weak-sandbox",
                help="Run generated code even where an isolation layer (network namespace, "
                "Landlock, a fresh uid) is missing on this machine. Off: such a run is refused.",
                rich_help_panel=_TABLEQA_PANEL,
            ),
        ],
        False,
    ),
}


@dataclass(frozen=True, slots=True)
class TableQAChoice:
    """The table-QA pipeline and sandbox limits a command was asked for."""

    pipeline: str
    fix_attempts: int
    timeout: float
    allow_weak_sandbox: bool

    def build(self, provider: LLMProvider) -> TableQA:
        """The pipeline over ``provider``, its generated code run under these limits."""
        from foretab.tableqa import SandboxLimits, TableQA

        limits = SandboxLimits(
            wall_s=self.timeout, cpu_s=max(1, int(self.timeout)), strict=not self.allow_weak_sandbox
        )
        return TableQA(provider, self.pipeline, fix_attempts=self.fix_attempts, limits=limits)


def tableqa_options(command: F) -> F:
    """Give ``command`` the table-QA flags, as its parameter ``tableqa: TableQAChoice``.

    ``--pipeline``, ``--fix-attempts``, ``--timeout`` and ``--allow-weak-sandbox``.
    """

    def choice(values: dict[str, Any]) -> TableQAChoice:
        if values["pipeline"] not in TABLEQA_PIPELINES:
            raise typer.BadParameter(
                f"use one of {', '.join(TABLEQA_PIPELINES)}", param_hint="--pipeline"
            )
        return TableQAChoice(**values)

    return _grouped(command, "tableqa", _TABLEQA_FLAGS, choice)


def _grouped(
    command: F,
    group: str,
    flags: dict[str, tuple[Any, Any]],
    make: Callable[[dict[str, Any]], Any],
) -> F:
    """``command`` with parameter ``group`` replaced by ``flags``, made into one value."""
    # Typer reads the signature, with string annotations (``from __future__ import
    # annotations``) evaluated: the wrapper's own is given resolved.
    signature = inspect.signature(command, eval_str=True)
    kept = [p for p in signature.parameters.values() if p.name != group]
    added = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=hint)
        for name, (hint, default) in flags.items()
    ]

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        values = {name: kwargs.pop(name, default) for name, (_, default) in flags.items()}
        return command(*args, **{group: make(values)}, **kwargs)

    parameters = [*kept, *added]
    wrapper.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in parameters}
    return wrapper  # type: ignore[return-value]


_DUCKDB_MAGIC = b"DUCK"  # bytes 8..12 of every DuckDB database file


def check_store_file(db: str) -> None:
    """Refuse, in our words, a ``--db`` file that is not a DuckDB database at all."""
    import os

    from foretab.errors import StoreError

    if "://" in db or not os.path.isfile(db):
        return  # a URL, or a missing path: the store layer's own messages say what to do
    with open(os.path.realpath(db), "rb") as handle:
        head = handle.read(12)
    if head[8:12] != _DUCKDB_MAGIC:
        raise StoreError(
            f"{db!r} is not a foretab store (not a DuckDB database file); build a store with "
            f"`foretab ingest CSV --db {db}.duckdb`, or pass a postgresql:// URL as --db"
        )


@contextmanager
def open_engine(db: str, choice: EngineChoice, **kwargs: Any) -> Iterator[Any]:
    """Build the engine (and its LLM provider), close both afterwards."""
    from foretab.engine import build_engine, provider_for

    check_store_file(db)
    provider = provider_for(choice.kind, choice.llm)
    try:
        built = build_engine(db, choice.kind, llm=provider, **choice.agent_options(), **kwargs)
        try:
            yield built
        finally:
            built.close()
    finally:
        if provider is not None:
            provider.close()
