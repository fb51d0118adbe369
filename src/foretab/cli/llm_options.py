"""The ``--llm-*`` options every LLM-backed command shares, and the provider they build.

Reuse in a command::

    from foretab.cli.llm_options import (
        LLMBaseUrlOption, LLMCacheOption, LLMConfigOption, LLMModelOption,
        LLMRecordOption, LLMReplayOption, build_llm,
    )

    def cmd(..., llm_base_url: LLMBaseUrlOption = None, llm_model: LLMModelOption = None,
            llm_cache: LLMCacheOption = None, llm_config: LLMConfigOption = None,
            llm_record: LLMRecordOption = None, llm_replay: LLMReplayOption = None):
        llm = build_llm(llm_base_url, llm_model, llm_cache, llm_config, llm_record, llm_replay)

Nothing heavy is imported here: the provider layer loads only when ``build_llm`` runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from foretab.llm import LLMProvider

_PANEL = "LLM endpoint"

LLMBaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--llm-base-url",
        help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1 (Ollama), "
        "http://127.0.0.1:8000/v1 (vLLM). Default: $FORETAB_LLM_BASE_URL. The API key is "
        "read from $FORETAB_LLM_API_KEY.",
        rich_help_panel=_PANEL,
    ),
]
LLMModelOption = Annotated[
    str | None,
    typer.Option(
        "--llm-model",
        help="Model name as the server knows it. Default: $FORETAB_LLM_MODEL.",
        rich_help_panel=_PANEL,
    ),
]
LLMCacheOption = Annotated[
    Path | None,
    typer.Option(
        "--llm-cache",
        help="SQLite file caching replies by the full request: reruns cost no calls.",
        rich_help_panel=_PANEL,
    ),
]
LLMConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--llm-config",
        help="TOML file with LLM options (an llm table: base_url, model, api_key_env, "
        "temperature, max_tokens, timeout_s, max_retries, max_calls_per_question, ...). "
        "Default: $FORETAB_LLM_CONFIG.",
        rich_help_panel=_PANEL,
    ),
]
LLMRecordOption = Annotated[
    Path | None,
    typer.Option(
        "--llm-record",
        help="Append every request and reply to this JSONL transcript.",
        rich_help_panel=_PANEL,
    ),
]
LLMReplayOption = Annotated[
    Path | None,
    typer.Option(
        "--llm-replay",
        help="Answer from a recorded transcript instead of a server (a request not in it "
        "is an error).",
        rich_help_panel=_PANEL,
    ),
]


def build_llm(
    base_url: str | None = None,
    model: str | None = None,
    cache: Path | None = None,
    config: Path | None = None,
    record: Path | None = None,
    replay: Path | None = None,
) -> LLMProvider:
    """The provider for these flags (env and config file fill the rest), or ``LLMConfigError``."""
    from foretab.llm import load_options, make_provider

    options = load_options(base_url=base_url, model=model, config_path=config)
    if replay is None:
        options.require_endpoint()
    return make_provider(options, cache=cache, record=record, replay=replay)
