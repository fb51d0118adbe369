"""What ``Engine.ask`` returns: the answer, its text, the plan, the data and a trace of every step."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from foretab.core.canonical import canonical
from foretab.core.plan import Plan, Task
from foretab.core.schema import (
    AnalyzeStepDoc,
    AnswerDoc,
    AnswerIntervalDoc,
    BasisDoc,
    CaptionDoc,
    EntityDoc,
    ForecastSeriesDoc,
    ForecastStepDoc,
    LLMCallStepDoc,
    LLMMessageDoc,
    LLMUsageDoc,
    PlaceQueryDoc,
    PlanDoc,
    PlanStepDoc,
    ReadStepDoc,
    RetrieveStepDoc,
    RetryStepDoc,
    ScopeDoc,
    ScopeQueryDoc,
    SeriesDoc,
    StepDoc,
    ThresholdDoc,
    ToolCallStepDoc,
    WindowDoc,
)
from foretab.core.series import Forecast, History
from foretab.core.stages import AnswerInterval
from foretab.core.trace import (
    AnalyzeStep,
    ForecastStep,
    LLMCallStep,
    PlanStep,
    ReadStep,
    RetrieveStep,
    RetryStep,
    Step,
    ToolCallStep,
    Trace,
)

Cell = str | float


@dataclass(frozen=True, slots=True)
class Answer:
    """An answer in the ODTQA-FoRe list format plus a one-sentence text."""

    question: str
    answer: list[list[Cell]]
    text: str
    task: Task
    plan: Plan
    trace: Trace
    history: History
    forecast: Forecast
    engine: str = "rules"
    probability: float | None = None
    decision: str | None = None
    intervals: tuple[AnswerInterval, ...] = ()
    #: the uncalibrated share of scenarios behind ``probability`` (None: no probability)
    scenario_share: float | None = None

    def to_doc(self) -> AnswerDoc:
        """The published JSON form (``foretab ask --json``, ``POST /api/ask``)."""
        retrieve = next((s for s in self.trace.steps if isinstance(s, RetrieveStep)), None)
        read = next((s for s in self.trace.steps if isinstance(s, ReadStep)), None)
        return AnswerDoc(
            question=self.question,
            task=self.task.value,
            answer=self.answer,
            text=self.text,
            canonical=canonical(self.plan),
            plan=plan_doc(self.plan),
            tables=list(self.trace.tables),
            retrieval=_captions(retrieve),
            sql=self.trace.sql,
            params=[str(p) for p in read.params] if read else [],
            history=[
                SeriesDoc(
                    outer=ref.outer,
                    inner=ref.inner,
                    name=ref.name,
                    values=[(m.label, round(v, 2)) for m, v in sorted(values.items())],
                )
                for ref, values in self.history.series.items()
            ],
            forecast=_forecast_docs(self.forecast),
            interval_level=self.forecast.level,
            probability=None if self.probability is None else round(self.probability, 4),
            decision_rule=self.decision,
            intervals=[
                AnswerIntervalDoc(row=i.row, lo=round(i.lo, 2), hi=round(i.hi, 2))
                for i in self.intervals
            ],
            future_source=self.trace.future_source,
            timings={k: round(v * 1000, 3) for k, v in self.trace.timings.items()},
            steps=[step_doc(s) for s in self.trace.steps],
            engine=self.engine,
            llm=_usage(self.trace),
        )

    def to_dict(self) -> dict[str, Any]:
        """``to_doc()`` as plain JSON-ready data."""
        return self.to_doc().model_dump(mode="json")


def plan_doc(plan: Plan) -> PlanDoc:
    """The JSON form of a plan."""
    scope = plan.scope
    return PlanDoc(
        reference_month=plan.reference_month.iso,
        entities=[_entity(p) for p in plan.entities],
        window=WindowDoc(
            first=plan.window.first.iso,
            last=plan.window.last.iso,
            expression=plan.window.expression,
            only=[m.iso for m in plan.window.only],
        ),
        aggregate=plan.aggregate.value,
        task=plan.task.value,
        comparison=plan.comparison.value,
        measure=plan.measure.value,
        metric=plan.wording.metric_name(plan.metric),
        change=plan.change.value if plan.change else None,
        which_month=plan.which_month.value if plan.which_month else None,
        threshold=ThresholdDoc(above=plan.threshold.above, value=plan.threshold.value)
        if plan.threshold
        else None,
        scopes=[ScopeDoc(outer=s.outer, inner=s.inner) for s in plan.scopes],
        scope=ScopeQueryDoc(
            op=scope.op.value,
            metric=plan.wording.metric_name(scope.metric),
            extreme=scope.extreme.value,
            rank_by=plan.wording.metric_name(scope.rank_by),
            n=scope.n,
            low=scope.low,
            high=scope.high,
        )
        if scope
        else None,
        place=_place_doc(plan),
        assumption=plan.assumption,
        language=plan.language.value,
    )


def _place_doc(plan: Plan) -> PlaceQueryDoc | None:
    place = plan.place
    if place is None:
        return None
    t = place.threshold
    return PlaceQueryDoc(
        op=place.op.value,
        change=place.change.value if place.change else None,
        extreme=place.extreme.value,
        n=place.n,
        low=place.low,
        high=place.high,
        threshold=ThresholdDoc(above=t.above, value=t.value) if t else None,
        each=place.each,
    )


def _entity(ref: Any) -> EntityDoc:
    return EntityDoc(outer=ref.outer, inner=ref.inner, name=ref.name)


def _captions(step: RetrieveStep | None) -> list[CaptionDoc]:
    if step is None:
        return []
    return [
        CaptionDoc(
            caption=m.caption,
            method=m.method,
            table=m.table.table_name if m.table is not None else None,
        )
        for m in step.matches
    ]


def _forecast_docs(forecast: Forecast) -> list[ForecastSeriesDoc]:
    docs = []
    for ref, points in forecast.points.items():
        basis = forecast.basis.get(ref)
        # The months as plain dicts: the series' validation checks each as a
        # ForecastValueDoc in one call (a model built per month cost ~10 µs each).
        docs.append(
            ForecastSeriesDoc(
                outer=ref.outer,
                inner=ref.inner,
                name=ref.name,
                values=[
                    {
                        "month": m.label,
                        "value": round(p.value, 2),
                        "lo": None if p.lo is None else round(p.lo, 2),
                        "hi": None if p.hi is None else round(p.hi, 2),
                    }
                    for m, p in sorted(points.items())
                ],
                basis=None
                if basis is None
                else BasisDoc(
                    months_used=basis.months_used,
                    last_observed=basis.last_observed.iso if basis.last_observed else None,
                    imputed_months=basis.imputed_months,
                    note=basis.note,
                ),
            )
        )
    return docs


def _usage(trace: Trace) -> LLMUsageDoc | None:
    calls = trace.llm_calls
    if not calls:
        return None
    return LLMUsageDoc(
        calls=len(calls),
        prompt_tokens=sum(c.prompt_tokens for c in calls),
        completion_tokens=sum(c.completion_tokens for c in calls),
        seconds=round(sum(c.seconds for c in calls), 3),
    )


def step_doc(step: Step) -> StepDoc:
    """One trace step as its JSON document."""
    ms = round(step.seconds * 1000, 3)
    if isinstance(step, LLMCallStep):
        return LLMCallStepDoc(
            implementation=step.implementation,
            ms=ms,
            purpose=step.purpose,
            model=step.model,
            messages=[LLMMessageDoc(role=m.role, content=m.content) for m in step.messages],
            reply=step.reply,
            tool_calls=list(step.tool_calls),
            finish_reason=step.finish_reason,
            prompt_tokens=step.prompt_tokens,
            completion_tokens=step.completion_tokens,
            attempts=step.attempts,
            retry_reasons=list(step.retry_reasons),
            source=step.source,
        )
    if isinstance(step, ToolCallStep):
        return ToolCallStepDoc(
            implementation=step.implementation,
            ms=ms,
            tool=step.tool,
            arguments=step.arguments,
            result=step.result,
            ok=step.ok,
        )
    if isinstance(step, RetryStep):
        return RetryStepDoc(
            implementation=step.implementation, ms=ms, reason=step.reason, attempt=step.attempt
        )
    if isinstance(step, RetrieveStep):
        return RetrieveStepDoc(implementation=step.implementation, ms=ms, matches=_captions(step))
    if isinstance(step, ReadStep):
        return ReadStepDoc(
            implementation=step.implementation,
            ms=ms,
            sql=step.sql,
            params=[str(p) for p in step.params],
            rows=step.rows,
            truncated=step.truncated,
            dropped_rows=step.dropped_rows,
        )
    if isinstance(step, ForecastStep):
        return ForecastStepDoc(
            implementation=step.implementation,
            ms=ms,
            months=[m.iso for m in step.months],
            level=step.level,
            interval_method=step.interval_method or None,
            drift_per_month=step.drift_per_month or None,
        )
    if isinstance(step, PlanStep):
        return PlanStepDoc(implementation=step.implementation, ms=ms)
    assert isinstance(step, AnalyzeStep)
    return AnalyzeStepDoc(
        implementation=step.implementation, ms=ms, uncertainty=step.uncertainty or None
    )
