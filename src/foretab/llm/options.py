"""``LLMOptions``: where the server is and how to call it, from flags, env and a TOML file.

Precedence, highest first: explicit values (CLI flags, keyword arguments), the environment
(``FORETAB_LLM_BASE_URL``, ``FORETAB_LLM_MODEL``), the config file (``--llm-config PATH`` or
``FORETAB_LLM_CONFIG``; keys of LLMOptions at top level or under ``[llm]``), the defaults.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from foretab.llm.budget import CallBudget
from foretab.llm.errors import LLMConfigError, LLMNotConfiguredError
from foretab.llm.redact import PLACEHOLDER_KEY, register_options

ENV_BASE_URL = "FORETAB_LLM_BASE_URL"
ENV_MODEL = "FORETAB_LLM_MODEL"
ENV_CONFIG = "FORETAB_LLM_CONFIG"
DEFAULT_API_KEY_ENV = "FORETAB_LLM_API_KEY"
# Local servers (vLLM, Ollama, llama.cpp) ignore the key, but the SDK insists on one.
_PLACEHOLDER_KEY = PLACEHOLDER_KEY


class LLMOptions(BaseModel):
    """Typed options of an OpenAI-compatible endpoint; unknown fields are refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str | None = Field(None, description="e.g. http://127.0.0.1:8000/v1")
    model: str | None = Field(None, description="model name as the server knows it")
    api_key_env: str = Field(DEFAULT_API_KEY_ENV, description="env variable holding the key")
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    max_tokens: int | None = Field(1024, ge=1)
    timeout_s: float = Field(60.0, gt=0.0, description="per HTTP attempt")
    max_retries: int = Field(3, ge=0, le=10, description="on 429, 5xx, timeouts, refused")
    retry_backoff_s: float = Field(1.0, ge=0.0, description="first wait; doubles per retry")
    max_backoff_s: float = Field(30.0, ge=0.0)
    max_calls_per_question: int = Field(8, ge=1, description="the per-question call budget")
    seed: int | None = None

    def api_key(self, environ: Mapping[str, str] | None = None) -> str:
        """The key from ``api_key_env`` (a placeholder when unset: local servers need none)."""
        env = os.environ if environ is None else environ
        return env.get(self.api_key_env) or _PLACEHOLDER_KEY

    def require_endpoint(self) -> tuple[str, str]:
        """``(base_url, model)`` or an error that says which flags to pass."""
        missing = [
            flag
            for flag, value in (("--llm-base-url", self.base_url), ("--llm-model", self.model))
            if not value
        ]
        if missing:
            raise LLMNotConfiguredError(
                f"no LLM configured: missing {' and '.join(missing)}. Pass --llm-base-url URL "
                f"--llm-model NAME (or set {ENV_BASE_URL} / {ENV_MODEL}, or a config file "
                f"with --llm-config), e.g. `--llm-base-url "
                "http://127.0.0.1:11434/v1 --llm-model qwen2.5-coder:32b`"
            )
        assert self.base_url is not None and self.model is not None
        return self.base_url, self.model

    def new_budget(self) -> CallBudget:
        """A fresh per-question budget of ``max_calls_per_question`` calls."""
        return CallBudget(self.max_calls_per_question)


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The LLM keys of a TOML file (its ``[llm]`` table, else its top level)."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LLMConfigError(f"LLM config file {str(path)!r} does not exist") from None
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise LLMConfigError(f"cannot read LLM config file {str(path)!r}: {error}") from None
    table = data.get("llm", data)
    if not isinstance(table, dict):
        raise LLMConfigError(f"{str(path)!r}: [llm] must be a table of LLMOptions keys")
    return table


def load_options(
    *,
    base_url: str | None = None,
    model: str | None = None,
    config_path: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    **overrides: Any,
) -> LLMOptions:
    """Merge defaults < config file < environment < explicit values into ``LLMOptions``."""
    env = os.environ if environ is None else environ
    merged: dict[str, Any] = {}
    config = config_path or env.get(ENV_CONFIG)
    if config:
        merged.update(read_config_file(config))
    for key, var in (("base_url", ENV_BASE_URL), ("model", ENV_MODEL)):
        if env.get(var):
            merged[key] = env[var]
    for key, value in (("base_url", base_url), ("model", model), *overrides.items()):
        if value is not None:
            merged[key] = value
    try:
        options = LLMOptions(**merged)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'options'}: {e['msg']}" for e in error.errors()
        )
        where = f" (config file {str(config)!r})" if config else ""
        raise LLMConfigError(
            f"bad LLM options{where}: {problems}. Known keys: {', '.join(LLMOptions.model_fields)}"
        ) from None
    register_options(options)  # from here on, messages and logs never show them
    return options
