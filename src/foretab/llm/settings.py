"""``LLMSettings``: the ``--llm-*`` flags of a command as one frozen value.

Commands, the web server and the benchmark's worker processes pass this (it pickles) and
build the provider from it where they need one; the environment and a config file fill
what it leaves unset (``foretab.llm.options.load_options``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from foretab.llm.provider import LLMProvider


@dataclass(frozen=True)
class LLMSettings:
    """Where the LLM is (``base_url``, ``model``, ``config``) and how calls are kept.

    ``cache``: a SQLite file of replies keyed by the full request; ``record``: a JSON Lines
    transcript to append to; ``replay``: answer from a transcript instead of a server.
    """

    base_url: str | None = None
    model: str | None = None
    cache: Path | None = None
    config: Path | None = None
    record: Path | None = None
    replay: Path | None = None

    def provider(self) -> LLMProvider:
        """The provider these settings describe, or ``LLMConfigError`` saying what is missing.

        ``LLMNotConfiguredError`` (a subclass) when no endpoint or model is set at all.
        """
        from foretab.llm import load_options, make_provider

        options = load_options(base_url=self.base_url, model=self.model, config_path=self.config)
        if self.replay is None:
            options.require_endpoint()
        return make_provider(options, cache=self.cache, record=self.record, replay=self.replay)
