"""The ``--engine`` options shared by ``foretab ask`` and ``foretab bench run``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

_PANEL = "Engine"

EngineOption = Annotated[
    str,
    typer.Option(
        "--engine",
        help="rules (default, no LLM), timefore (the paper's LLM agents), vanilla (the "
        "paper's LLM-only baseline) or hybrid (rules first, TimeFore for questions the "
        "rules cannot plan). The LLM engines need --llm-base-url and --llm-model.",
        rich_help_panel=_PANEL,
    ),
]
FewshotOption = Annotated[
    Path | None,
    typer.Option(
        "--fewshot",
        help="Draw the LLM prompts' few-shot examples (and train the question-type "
        "classifier) from this split of `foretab bench build` (DIR/train.jsonl). "
        "Default: the shipped examples.",
        rich_help_panel=_PANEL,
    ),
]
MaxSqlIterationsOption = Annotated[
    int,
    typer.Option(
        "--max-sql-iterations",
        min=1,
        help="TimeFore: LLM calls allowed to write and repair the history SQL (paper: 25).",
        rich_help_panel=_PANEL,
    ),
]
ToolModelOption = Annotated[
    str | None,
    typer.Option(
        "--tool-model",
        help="TimeFore: model behind imputationThenPredictionTool (default: the store's "
        "trained forecaster; naive, drift, autoets or autotheta need no training).",
        rich_help_panel=_PANEL,
    ),
]

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

LLMFlags = tuple[Any, Any, Any, Any, Any, Any]


def llm_for(engine: str, flags: LLMFlags) -> Any:
    """The provider for an LLM engine (None for rules), or a clear error naming the flags."""
    from foretab.engines import LLM_ENGINES, check_engine, no_llm_error
    from foretab.llm import LLMConfigError

    check_engine(engine)
    if engine not in LLM_ENGINES:
        return None
    from foretab.cli.llm_options import build_llm

    try:
        return build_llm(*flags)
    except LLMConfigError as error:
        if "no LLM configured" in error.message:
            raise no_llm_error(engine) from None
        raise


@contextmanager
def open_engine(db: str, engine: str, *, llm: LLMFlags, **kwargs: Any) -> Iterator[Any]:
    """Build the engine (and its LLM provider), close both afterwards."""
    from foretab.engines import build_engine

    provider = llm_for(engine, llm)
    try:
        built = build_engine(db, engine, llm=provider, **kwargs)
        try:
            yield built
        finally:
            built.close()
    finally:
        if provider is not None:
            provider.close()
