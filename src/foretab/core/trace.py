"""The trace of one question: a list of typed steps, one per stage that ran.

Each step says which implementation ran (``rules``, ``golden-captions``, ``model:lgbm``,
an LLM agent, ...), how long it took and what it produced, so a user can check an answer
and the benchmark can tell ablations apart without parsing strings.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from foretab.core.catalog import CaptionMatch
from foretab.core.months import Month


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
    #: how the intervals were calibrated (``backtest``: out-of-sample residuals)
    interval_method: str = ""
    #: the recent drift the forecasts were moved by (log change a month; 0: none)
    drift_per_month: float = 0.0
    stage: str = field(default="forecast", init=False)


@dataclass(frozen=True, slots=True)
class AnalyzeStep:
    """The answer was computed."""

    implementation: str
    seconds: float
    #: how the answer's probability or intervals were computed (empty: it has neither)
    uncertainty: str = ""
    stage: str = field(default="analyze", init=False)


@dataclass(frozen=True, slots=True)
class LLMMessage:
    """One chat message as sent to or received from an LLM (tool calls as ``name(args)``)."""

    role: str
    content: str


@dataclass(frozen=True, slots=True)
class LLMCallStep:
    """One chat completion an LLM agent made.

    ``messages`` are the messages added to the conversation since the agent's previous
    call in it (all of them on the first call), so a long repair loop is not stored
    quadratically; ``reply`` and ``tool_calls`` are what came back.
    """

    implementation: str  # the agent, e.g. "timefore.sql"
    seconds: float
    purpose: str
    model: str
    messages: tuple[LLMMessage, ...]
    reply: str
    tool_calls: tuple[str, ...] = ()
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    attempts: int = 1
    retry_reasons: tuple[str, ...] = ()
    source: str = "http"
    stage: str = field(default="llm", init=False)


@dataclass(frozen=True, slots=True)
class ToolCallStep:
    """One tool an LLM called (``sqlQueryTool``, ``imputationThenPredictionTool``)."""

    implementation: str
    seconds: float
    tool: str
    arguments: str
    result: str
    ok: bool
    stage: str = field(default="tool", init=False)


@dataclass(frozen=True, slots=True)
class RetryStep:
    """An agent asked again: the reply was unusable (``reason`` says why)."""

    implementation: str
    seconds: float
    reason: str
    attempt: int
    stage: str = field(default="retry", init=False)


Step = (
    PlanStep
    | RetrieveStep
    | ReadStep
    | ForecastStep
    | AnalyzeStep
    | LLMCallStep
    | ToolCallStep
    | RetryStep
)


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
        """Seconds per stage, plus ``total`` (LLM and tool time is inside its stage's)."""
        stages = [s for s in self.steps if not isinstance(s, _INNER_STEPS)]
        out = {s.stage: s.seconds for s in stages}
        out["total"] = sum(s.seconds for s in stages)
        return out

    @property
    def llm_calls(self) -> tuple[LLMCallStep, ...]:
        """Every LLM call the question made, in order."""
        return tuple(s for s in self.steps if isinstance(s, LLMCallStep))


# Steps that happen inside a stage: their time is already in the stage's own step.
_INNER_STEPS = (LLMCallStep, ToolCallStep, RetryStep)
