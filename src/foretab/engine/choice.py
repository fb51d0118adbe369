"""``EngineChoice``: which engine to build, and the LLM it talks to, as one frozen value."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from foretab.llm.settings import LLMSettings


@dataclass(frozen=True)
class EngineChoice:
    """``kind`` (rules, timefore, vanilla, hybrid), the agents' options and the LLM settings.

    It pickles: the benchmark's worker processes each build their own engine from it.
    """

    kind: str = "rules"
    fewshot: Path | None = None
    max_sql_iterations: int = 25
    tool_model: str | None = None
    llm: LLMSettings = field(default_factory=LLMSettings)

    def agent_options(self) -> dict[str, Any]:
        """The ``build_engine`` keywords of the LLM agents (ignored by the rules engine)."""
        return {
            "fewshot": self.fewshot,
            "max_sql_iterations": self.max_sql_iterations,
            "tool_model": self.tool_model,
        }
