"""The rule stages (no LLM): the default of every engine, and what the ablations replace."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from foretab.analyze import RuleAnalyzer
from foretab.analyze.calibration import ProbabilityCalibration, load_calibration
from foretab.analyze.probability import check_decision
from foretab.analyze.scenarios import Copula
from foretab.core.stages import Analyzer, FutureSource, HistoryReader, Planner, TableRetriever
from foretab.engine.context import StoreSession
from foretab.engine.core import Stages
from foretab.forecast import sources
from foretab.forecast.sources import FutureMode, LazySource
from foretab.parse.planner import RulePlanner
from foretab.read import GuardedHistoryReader

T = TypeVar("T")

#: A stage, or a factory that builds it from the engine's session (for stages that read
#: through the engine's own guard, as the golden-history ablation does).
StageChoice = T | Callable[[StoreSession], T] | None


def chosen(stage: StageChoice[T], session: StoreSession) -> T | None:
    """``stage`` itself, built from ``session`` if it is a factory, or None."""
    if stage is None:
        return None
    if callable(stage) and not hasattr(stage, "name"):  # a stage has a name, a factory not
        return stage(session)  # type: ignore[return-value]
    return stage  # type: ignore[return-value]


def rule_planner(session: StoreSession) -> RulePlanner:
    """The rule planner over the session's shared entity index."""
    context = session.context
    return RulePlanner(context.index, context.reference, context.lexicon)


def model_future(
    session: StoreSession, future: FutureMode, model: str | None, level: float | None
) -> LazySource:
    """``--future model|oracle|none``, loaded on first use."""
    context = session.context
    return LazySource(
        lambda: sources.future_source(future, context.db, session.store, model, level),
        mode=future,
        model=model,
    )


def rule_stages(
    session: StoreSession,
    *,
    future: FutureMode = "model",
    model: str | None = None,
    level: float | None = None,
    decision: str | None = None,
    planner: StageChoice[Planner] = None,
    retriever: StageChoice[TableRetriever] = None,
    reader: StageChoice[HistoryReader] = None,
    future_source: StageChoice[FutureSource] = None,
    analyzer: StageChoice[Analyzer] = None,
) -> Stages:
    """The rule stages over ``session``, with any of them replaced.

    ``future``: ``model`` forecasts the series read with the model fitted for the store;
    ``oracle`` reads the future store (evaluation only); ``none`` carries the last observed
    price forward. ``level``: the forecast intervals' level (default 80%); ``decision``: how
    reasoning answers are chosen from the forecast distribution
    (``foretab.analyze.probability``).
    """
    context = session.context
    return Stages(
        planner=chosen(planner, session) or rule_planner(session),
        retriever=chosen(retriever, session) or context.retriever,
        reader=chosen(reader, session)
        or GuardedHistoryReader(session.guard, context.schema.columns),
        future=chosen(future_source, session) or model_future(session, future, model, level),
        analyzer=chosen(analyzer, session) or StoreRuleAnalyzer(decision)(session),
    )


@dataclass(frozen=True, slots=True)
class StoreRuleAnalyzer:
    """The rule analyzer of a session, stating probabilities through its store's calibration.

    A factory (``StageChoice``) rather than an analyzer, so that a non-default decision
    rule or copula keeps the store's calibration; plain data, so it pickles to the
    benchmark's worker processes.
    """

    decision: str | None = None
    copula: Copula | None = None

    def __post_init__(self) -> None:
        check_decision(self.decision)  # an unknown rule is refused before any store opens

    def __call__(self, session: StoreSession) -> RuleAnalyzer:
        return RuleAnalyzer(
            self.decision, self.copula, calibration=lambda: store_calibration(session)
        )


def store_calibration(session: StoreSession) -> ProbabilityCalibration | None:
    """The probability calibration saved with the session's store (for its model), if any."""
    from foretab.forecast.store import ARTIFACT_NAME

    return load_calibration(session.store, ARTIFACT_NAME)
