"""One small interface per stage of the question engine (docs/design.md §2).

``Engine`` composes one implementation of each. The ablations (golden captions, golden
history, golden future, persistence) and the LLM agents are other implementations of the
same interfaces, chosen by whoever builds the engine — never switches inside ``ask``.

Every implementation has a ``name`` that the trace records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from foretab.core.catalog import Retrieval
from foretab.core.plan import Plan
from foretab.core.series import Forecast, History

if TYPE_CHECKING:
    from foretab.core.trace import Step

Cell = str | float


@dataclass(frozen=True, slots=True)
class HistoryRead:
    """A reader's result: the series, and the query that produced it (for the trace)."""

    history: History
    sql: str = ""
    params: tuple[object, ...] = ()
    rows: int = 0
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class AnswerInterval:
    """The central interval (at the forecast's level) of the number in ``answer[row]``."""

    row: int
    lo: float
    hi: float


@dataclass(frozen=True, slots=True)
class Analysis:
    """The answer list (ODTQA-FoRe format) and a one-sentence text answer."""

    answer: list[list[Cell]]
    text: str
    #: categorical answers with a forecast distribution: the probability that ``answer``
    #: is exactly right (``foretab.analyze.probability``), and the rule that chose it
    probability: float | None = None
    decision: str | None = None
    #: the share of scenarios giving ``answer`` before calibration
    #: (``foretab.analyze.calibration``; equal to ``probability`` without a calibration)
    scenario_share: float | None = None
    #: numeric answers about the future: an interval per forecast number of ``answer``
    intervals: tuple[AnswerInterval, ...] = ()
    #: how the probability or the intervals were computed (for the trace); empty: neither
    uncertainty: str = ""


class Planner(Protocol):
    """Question text → a typed ``Plan`` (raises ``QuestionError`` when it cannot)."""

    name: str

    def plan(self, question: str) -> Plan: ...


class TableRetriever(Protocol):
    """Plan → the history tables it needs, and how each was found."""

    name: str

    def retrieve(self, plan: Plan) -> Retrieval: ...


class HistoryReader(Protocol):
    """Plan + tables → the observed series, read through the SQL guard."""

    name: str

    def read(self, plan: Plan, retrieval: Retrieval) -> HistoryRead: ...


class FutureSource(Protocol):
    """Plan + the history that was read → values for the plan's months after R."""

    name: str

    def forecast(self, plan: Plan, history: History) -> Forecast: ...


class Analyzer(Protocol):
    """Plan + history + forecast → the exact answer and its text."""

    name: str

    def analyze(self, plan: Plan, history: History, forecast: Forecast) -> Analysis: ...


@runtime_checkable
class RecordsSteps(Protocol):
    """A stage that records steps of its own (LLM calls, tool calls, retries).

    The engine collects them after the stage runs, so they appear in the trace in order;
    stages sharing one log hand each step over once.
    """

    def take_steps(self) -> list[Step]: ...
