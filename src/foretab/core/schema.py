"""The published JSON form of an answer: what ``foretab ask --json`` prints and the HTTP API returns.

Pydantic models with ``extra="forbid"``: the JSON schema (``AnswerDoc.model_json_schema()``)
is the contract for anything across a process boundary. Numbers are finite by
construction (``allow_inf_nan=False``), and ``dumps`` refuses NaN as a last line of defence.
"""

from __future__ import annotations

import json
import math
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from foretab.corpus.public import ENTITIES_KEY, ENTITY_KEYS

Cell = str | float


def _key(slot: str, **kwargs: Any) -> Any:
    """A field published under the JSON's fixed name for an entity slot (``corpus.public``)."""
    return Field(alias=ENTITY_KEYS[slot], **kwargs)


class Doc(BaseModel):
    """Base: unknown fields are refused, values frozen, numbers finite."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        allow_inf_nan=False,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
    )


class EntityDoc(Doc):
    """An entity, named as in the catalog (the leaf ``name`` in its outer levels)."""

    outer: str = _key("outer")
    inner: str = _key("inner")
    name: str = _key("name")


class WindowDoc(Doc):
    """The months a question asks about."""

    first: str = Field(description="YYYY-MM")
    last: str = Field(description="YYYY-MM")
    expression: str
    only: list[str] = Field([], description="YYYY-MM months when they are not one run")


class ScopeDoc(Doc):
    """An inner group (or an outer one, ``inner`` null) asked about as a whole."""

    outer: str = _key("outer")
    inner: str | None = _key("inner")


class ScopeQueryDoc(Doc):
    """What a scope question computes over the scope's projects."""

    op: str
    metric: str
    extreme: str
    rank_by: str
    n: int
    low: float | None
    high: float | None


class ThresholdDoc(Doc):
    """An "above / below V" question."""

    above: bool
    value: float


class PlaceQueryDoc(Doc):
    """What a question asks of districts or cities as wholes (docs/design.md §4.1)."""

    op: str
    change: str | None = None
    extreme: str = "highest"
    n: int = 1
    low: float | None = None
    high: float | None = None
    threshold: ThresholdDoc | None = None
    each: bool = False


class PlanDoc(Doc):
    """The typed plan the question was parsed into."""

    reference_month: str = Field(description="YYYY-MM: 'now'")
    entities: list[EntityDoc] = Field(
        alias=ENTITIES_KEY, description="named entities, or a scope's candidates"
    )
    window: WindowDoc
    aggregate: str
    task: str
    comparison: str
    measure: str
    metric: str = Field(description="the primary measure's name, or units")
    change: str | None = Field(None, description="numeric change: absolute / relative")
    which_month: str | None = None
    threshold: ThresholdDoc | None = None
    scopes: list[ScopeDoc] = []
    scope: ScopeQueryDoc | None = None
    place: PlaceQueryDoc | None = Field(
        None, description="the scopes asked about as wholes: the operation on their series"
    )
    assumption: str = Field("", description="a default chosen for the question (no time given)")
    language: str = "en"


class SeriesDoc(EntityDoc):
    """One project's observed values."""

    values: list[tuple[str, float]] = Field(description="[month label, value], in month order")


class ForecastValueDoc(Doc):
    """One forecast month: the point value and its interval."""

    month: str = Field(description="e.g. 'January 2022'")
    value: float
    lo: float | None = Field(None, description="lower bound of the interval at `level`")
    hi: float | None = Field(None, description="upper bound of the interval at `level`")


class BasisDoc(Doc):
    """What a forecast was computed from."""

    months_used: int
    last_observed: str | None
    imputed_months: int
    note: str


class ForecastSeriesDoc(EntityDoc):
    """One project's forecast values."""

    values: list[ForecastValueDoc]
    basis: BasisDoc | None = None


class CaptionDoc(Doc):
    """How one table caption was resolved."""

    caption: str
    method: str
    table: str | None


class _StepDoc(Doc):
    """Common fields of a trace step."""

    implementation: str
    ms: float


class PlanStepDoc(_StepDoc):
    """The planning step."""

    stage: Literal["plan"] = "plan"


class RetrieveStepDoc(_StepDoc):
    """The table-retrieval step."""

    stage: Literal["retrieve"] = "retrieve"
    matches: list[CaptionDoc]


class ReadStepDoc(_StepDoc):
    """The history read: the SQL that ran through the guard."""

    stage: Literal["read"] = "read"
    sql: str
    params: list[str]
    rows: int
    truncated: bool
    dropped_rows: int


class ForecastStepDoc(_StepDoc):
    """The forecast step: which source, which months."""

    stage: Literal["forecast"] = "forecast"
    months: list[str]
    level: float | None
    interval_method: str | None = Field(
        None,
        description="how intervals were calibrated: 'backtest' (out-of-sample), "
        "'backtest-per-series' (out-of-sample, scaled to each series' volatility), "
        "'in-sample', or 'quantile-boosters' (units sold: the units model's own 10% / 90% "
        "quantile boosters and its row probability, not calibrated)",
    )
    drift_per_month: float | None = Field(
        None,
        description="the recent drift the forecasts were moved by, as a log change a month "
        "(horizon h moves by h times it); null: none",
    )


class AnalyzeStepDoc(_StepDoc):
    """The analysis step."""

    stage: Literal["analyze"] = "analyze"
    uncertainty: str | None = Field(
        None, description="how the answer's probability or intervals were computed"
    )


class LLMMessageDoc(Doc):
    """One chat message of an LLM call."""

    role: str
    content: str


class LLMCallStepDoc(_StepDoc):
    """One LLM chat completion: what was sent, what came back, tokens and retries."""

    stage: Literal["llm"] = "llm"
    purpose: str
    model: str
    messages: list[LLMMessageDoc] = Field(
        description="messages added since the agent's previous call in this conversation"
    )
    reply: str
    tool_calls: list[str]
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    attempts: int = Field(description="HTTP attempts (retries on 429/5xx/timeouts)")
    retry_reasons: list[str]
    source: str = Field(description="http, cache or replay")


class ToolCallStepDoc(_StepDoc):
    """One tool call an LLM made and what the tool returned."""

    stage: Literal["tool"] = "tool"
    tool: str
    arguments: str
    result: str
    ok: bool


class RetryStepDoc(_StepDoc):
    """An agent re-asked the LLM because its reply was unusable."""

    stage: Literal["retry"] = "retry"
    reason: str
    attempt: int


StepDoc = Annotated[
    PlanStepDoc
    | RetrieveStepDoc
    | ReadStepDoc
    | ForecastStepDoc
    | AnalyzeStepDoc
    | LLMCallStepDoc
    | ToolCallStepDoc
    | RetryStepDoc,
    Field(discriminator="stage"),
]


class LLMUsageDoc(Doc):
    """LLM calls, tokens and seconds one question used."""

    calls: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float


class AnswerIntervalDoc(Doc):
    """The interval of one forecast number of an answer."""

    row: int = Field(description="index of the answer row whose number it bounds")
    lo: float
    hi: float


class AnswerDoc(Doc):
    """One answered question."""

    question: str
    task: str
    answer: list[list[Cell]] = Field(description="the ODTQA-FoRe list format (docs/design.md §4)")
    text: str
    canonical: str = Field(
        "", description="the plan rendered back as one question: exactly what was answered"
    )
    plan: PlanDoc
    tables: list[str]
    retrieval: list[CaptionDoc]
    sql: str
    params: list[str]
    history: list[SeriesDoc]
    forecast: list[ForecastSeriesDoc]
    interval_level: float | None
    probability: float | None = Field(
        None,
        description="reasoning answers: the probability, from the forecast distribution, "
        "that `answer` is exactly right",
    )
    decision_rule: str | None = Field(
        None,
        description="how the reasoning answer was chosen: 'point', 'most-probable', "
        "'balanced' or 'max-f1'",
    )
    intervals: list[AnswerIntervalDoc] = Field(
        default_factory=list,
        description="numeric answers about the future: the central interval (at "
        "`interval_level`) of the number in `answer[row]`",
    )
    future_source: str
    timings: dict[str, float] = Field(description="milliseconds per stage and 'total'")
    steps: list[StepDoc]
    engine: str = Field("rules", description="rules, timefore, vanilla or hybrid")
    llm: LLMUsageDoc | None = Field(None, description="LLM usage (LLM engines only)")


class ErrorBody(Doc):
    """An error: its type, message and suggested fixes."""

    type: str
    message: str
    suggestions: list[str] = []
    rule: str | None = None


class ErrorDoc(Doc):
    """What a failed question returns (CLI ``--json`` and the HTTP API alike)."""

    error: ErrorBody


# Code points that drive or disguise a terminal even inside a JSON string, and which
# ``json.dumps(ensure_ascii=False)`` writes raw: DEL, the C1 controls (U+009B is an 8-bit
# CSI, U+009D an OSC), the bidirectional marks, embeddings, overrides and isolates (they
# reorder what is shown), the line and paragraph separators (a newline to some terminals
# and to JavaScript) and lone surrogates (undecodable argv bytes; printing them crashes).
# json.dumps already escapes the C0 controls.
_TERMINAL_UNSAFE = re.compile(
    "[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def terminal_safe(text: str) -> str:
    r"""JSON text with every terminal-unsafe code point written as a ``\uXXXX`` escape.

    Outside string literals JSON text is ASCII, so every match is inside a string, where
    the escape is valid JSON and ``json.loads`` gives the original character back.
    """
    return _TERMINAL_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def dumps(doc: BaseModel) -> str:
    """Strict JSON (no NaN/Infinity), non-ASCII kept readable, safe to print."""
    text = json.dumps(doc.model_dump(mode="json"), ensure_ascii=False, allow_nan=False)
    return terminal_safe(text)


def finite(value: object) -> object:
    """``value`` with every non-finite float replaced by ``None`` (JSON has no NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def dumps_plain(value: object, **kwargs: Any) -> str:
    """Strict JSON of plain data (benchmark reports, listings): NaN becomes null.

    Safe to print (``terminal_safe``) also with ``ensure_ascii=False``.
    """
    return terminal_safe(json.dumps(finite(value), allow_nan=False, **kwargs))
