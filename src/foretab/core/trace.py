"""The trace of one question: a list of typed steps, one per stage that ran.

Each step says which implementation ran (``rules``, ``golden-captions``, ``model:lgbm``,
an LLM agent, ...), how long it took and what it produced, so a user can check an answer
and the benchmark can tell ablations apart without parsing strings.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from foretab.core.catalog import CaptionMatch
from foretab.months import Month


@dataclass(frozen=True, slots=True)
class PlanStep:
    """The question was planned."""

    implementation: str
    seconds: float
    stage: str = field(default="plan", init=False)


@dataclass(frozen=True, slots=True)
class RetrieveStep:
    """Tables were retrieved for the plan."""

    implementation: str
    seconds: float
    matches: tuple[CaptionMatch, ...]
    stage: str = field(default="retrieve", init=False)

    @property
    def tables(self) -> tuple[str, ...]:
        return tuple(m.table.table_name for m in self.matches if m.table is not None)


@dataclass(frozen=True, slots=True)
class ReadStep:
    """History was read through the SQL guard."""

    implementation: str
    seconds: float
    sql: str
    params: tuple[object, ...]
    rows: int
    truncated: bool = False
    dropped_rows: int = 0
    stage: str = field(default="read", init=False)


@dataclass(frozen=True, slots=True)
class ForecastStep:
    """Future values were produced for the plan's months after R."""

    implementation: str
    seconds: float
    months: tuple[Month, ...]
    level: float | None
    stage: str = field(default="forecast", init=False)


@dataclass(frozen=True, slots=True)
class AnalyzeStep:
    """The answer was computed."""

    implementation: str
    seconds: float
    stage: str = field(default="analyze", init=False)


Step = PlanStep | RetrieveStep | ReadStep | ForecastStep | AnalyzeStep


@dataclass(frozen=True, slots=True)
class Trace:
    """Every step that ran, in order."""

    steps: tuple[Step, ...] = ()

    def _first(self, kind: type) -> Step | None:
        return next((s for s in self.steps if isinstance(s, kind)), None)

    @property
    def tables(self) -> tuple[str, ...]:
        """The tables retrieval chose (empty when no retrieval ran)."""
        step = self._first(RetrieveStep)
        return step.tables if isinstance(step, RetrieveStep) else ()

    @property
    def sql(self) -> str:
        step = self._first(ReadStep)
        return step.sql if isinstance(step, ReadStep) else ""

    @property
    def future_source(self) -> str:
        step = self._first(ForecastStep)
        return step.implementation if isinstance(step, ForecastStep) else "none needed"

    @property
    def timings(self) -> dict[str, float]:
        """Seconds per stage, plus ``total``."""
        out = {s.stage: s.seconds for s in self.steps}
        out["total"] = sum(s.seconds for s in self.steps)
        return out
