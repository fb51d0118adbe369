"""The Forecaster agent: the LLM lays out 24 monthly prices and calls the forecasting tool.

``imputationThenPredictionTool(data, project)`` takes exactly 24 values (R-23..R, ``"-"``
for a month without a price), fills the gaps with foretab's imputer and forecasts the 12
months after R with the store's fitted model. The tool validates what the LLM wrote — a
list of the wrong length, a value that is neither a number nor "-", an unknown project —
and returns the problem to the LLM as the tool's result so it can call again. The
forecast used downstream is the tool's output for the data the LLM passed: an LLM that
lays the months out wrongly gets a wrong forecast, which is what the paper measures.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

from foretab.core.months import Month, month_range
from foretab.core.plan import EntityRef, Plan
from foretab.core.series import Forecast, ForecastBasis, ForecastPoint, History
from foretab.errors import ForecastError, ForetabError
from foretab.llm import ChatMessage, ToolCall, ToolSpec
from foretab.llm.errors import LLMReplyError
from foretab.timefore.errors import AgentError
from foretab.timefore.examples import Example
from foretab.timefore.prompts import HORIZON, LOOKBACK, history_rows, render
from foretab.timefore.session import AgentSession, Conversation
from foretab.timefore.tools import ToolResult, tool_turn

if TYPE_CHECKING:
    from foretab.forecast.base import Imputer

TOOL_NAME = "imputationThenPredictionTool"
MISSING = "-"
LEVEL = 0.8
FORECAST_TOOL = ToolSpec(
    name=TOOL_NAME,
    description="Impute the missing months of a project's 24 monthly prices, then forecast "
    "its next 12 months. Returns [[project, 'Month Year', price], ...].",
    parameters={
        "type": "object",
        "properties": {
            "data": {
                "type": "array",
                "items": {"type": ["number", "string"]},
                "minItems": LOOKBACK,
                "maxItems": LOOKBACK,
                "description": f"exactly {LOOKBACK} monthly prices in month order, "
                f"'{MISSING}' for a month without a price",
            },
            "project": {
                "type": "string",
                "description": "the project name ('single' when the question has one project)",
            },
        },
        "required": ["data"],
    },
)


class SeriesModel(Protocol):
    """What the tool needs of a fitted model (``foretab.forecast.store.StoreModel``)."""

    model: str
    lookback: int

    def predict(self, history: np.ndarray, h: int) -> np.ndarray: ...


def parse_data(raw: object) -> list[float | None]:
    """The tool's ``data`` as 24 floats / ``None``; ``LLMReplyError`` says what is wrong."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw.replace("'", '"'))
        except json.JSONDecodeError:
            raise LLMReplyError(
                f"data must be a JSON array of {LOOKBACK} values, got the string {raw[:80]!r}"
            ) from None
    if not isinstance(raw, list):
        raise LLMReplyError(f"data must be an array of {LOOKBACK} values, got {type(raw).__name__}")
    if len(raw) != LOOKBACK:
        raise LLMReplyError(
            f"data has {len(raw)} values; it must have exactly {LOOKBACK} (one per month, "
            f"oldest first, '{MISSING}' for a missing month)"
        )
    out: list[float | None] = []
    for i, value in enumerate(raw, start=1):
        if value is None or (isinstance(value, str) and value.strip() in ("", MISSING, "null")):
            out.append(None)
            continue
        number: float | None = None
        if isinstance(value, int | float) and not isinstance(value, bool):
            number = float(value)
        elif isinstance(value, str):
            try:
                number = float(value.replace(",", ""))
            except ValueError:
                number = None
        if number is None or not math.isfinite(number) or number <= 0:
            raise LLMReplyError(
                f"data value {i} is {value!r}; each value must be a positive price or '{MISSING}'"
            )
        out.append(number)
    if all(v is None for v in out):
        raise LLMReplyError("data has no price at all; pass the observed prices")
    return out


class ImputeThenPredict:
    """The tool's body: foretab's imputer, then the store's forecaster, 12 months ahead.

    ``model`` may be a loader, called on first use: history questions never load a model.
    """

    def __init__(
        self,
        model: SeriesModel | Callable[[], SeriesModel],
        imputer: Imputer,
        reference: Month,
        model_name: str = "store",
    ) -> None:
        self._model = model if hasattr(model, "predict") else None
        self._loader = None if self._model is not None else model
        self.imputer = imputer
        self.reference = reference
        self._name = model_name

    @property
    def model(self) -> SeriesModel:
        if self._model is None:
            assert callable(self._loader)
            self._model = self._loader()
        return self._model

    @property
    def name(self) -> str:
        model = self._model.model if self._model is not None else self._name
        return f"{self.imputer.alias}+{model}"

    def __call__(self, values: Sequence[float | None]) -> dict[Month, ForecastPoint]:
        series = np.array([[np.nan if v is None else v for v in values]], dtype=float)
        filled = self.imputer.impute(series)
        lookback = int(self.model.lookback)
        if lookback >= LOOKBACK:
            arr = np.full((1, lookback), np.nan)
            arr[0, lookback - LOOKBACK :] = filled[0]
        else:
            arr = filled[:, LOOKBACK - lookback :]
        values_out = np.asarray(self.model.predict(arr, HORIZON), dtype=float)[0]
        bounds = self._bounds(arr)
        months = month_range(self.reference + 1, self.reference + HORIZON)
        points: dict[Month, ForecastPoint] = {}
        for k, month in enumerate(months):
            value = float(values_out[k])
            if not math.isfinite(value):
                raise ForecastError(f"the forecaster gave no finite value for {month.label}")
            lo = hi = None
            if bounds is not None:
                lo, hi = min(float(bounds[k, 0]), value), max(float(bounds[k, 1]), value)
            points[month] = ForecastPoint(value, lo, hi)
        return points

    def _bounds(self, arr: np.ndarray) -> np.ndarray | None:
        quantiles = getattr(self.model, "predict_quantiles", None)
        if quantiles is None:
            return None
        tail = (1 - LEVEL) / 2
        try:
            q = np.asarray(quantiles(arr, HORIZON, (tail, 1 - tail)), dtype=float)[0]
        except ForetabError:
            return None
        return q if np.isfinite(q).all() else None


class RegistryModel:
    """A local forecaster of ``foretab.forecast.registry`` (no fitting) as a tool model.

    For stores without a fitted model the tool can still run (``--tool-model drift``);
    the trace names the model, so a result is never mistaken for the store's.
    """

    lookback = LOOKBACK

    def __init__(self, name: str) -> None:
        from foretab.forecast.registry import get_forecaster

        self.model = name
        self._forecaster = get_forecaster(name)

    def predict(self, history: np.ndarray, h: int) -> np.ndarray:
        return self._forecaster.predict(history, h)

    def predict_quantiles(
        self, history: np.ndarray, h: int, quantiles: tuple[float, ...]
    ) -> np.ndarray:
        return self._forecaster.predict_quantiles(history, h, quantiles)


def tool_output(ref: EntityRef, points: dict[Month, ForecastPoint]) -> str:
    """What the tool returns to the LLM: ``[[project, month, price], ...]``."""
    return repr([[ref.name, m.label, round(p.value, 2)] for m, p in sorted(points.items())])


def data_for(history: History, ref: EntityRef, reference: Month) -> list[object]:
    """The 24 values a correct tool call passes (for examples)."""
    observed = history[ref]
    return [
        round(observed[m], 2) if m in observed else MISSING
        for m in month_range(reference - (LOOKBACK - 1), reference)
    ]


class ToolForecaster:
    """The Forecaster agent (a ``FutureSource``)."""

    def __init__(
        self,
        session: AgentSession,
        tool: ImputeThenPredict,
        examples: Sequence[Example],
        *,
        retries: int = 3,
    ) -> None:
        self.session = session
        self.tool = tool
        self.example = next((e for e in examples if e.history and e.forecast), None)
        self.retries = retries

    @property
    def name(self) -> str:
        return f"timefore.forecaster:{self.tool.name}"

    def take_steps(self) -> tuple:
        return self.session.take_steps()

    def _system(self, reference: Month) -> str:
        block = ""
        e = self.example
        if e is not None and e.history is not None and e.forecast is not None:
            ref = e.projects[0]
            points = e.forecast.points.get(ref, {})
            output = repr([[m.label, round(p.value, 2)] for m, p in sorted(points.items())])
            data = data_for(e.history, ref, reference)
            block = (
                "### Example 1 (Single Project) ###\n"
                f"<Query>: {e.question}\n<History Price>: {history_rows(e.history, [ref])}\n"
                f"Tool Input: `data = {data!r}, project=single`\n"
                f"Tool Output: `{output}`\nFinal Output:\n<Future Price>: {output}"
            )
        return render("forecaster", reference, examples=block)

    def _resolve(self, name: object, refs: Sequence[EntityRef]) -> EntityRef:
        if len(refs) == 1:
            return refs[0]
        text = str(name or "").strip().casefold()
        for ref in refs:
            if ref.name.casefold() == text:
                return ref
        close = [r for r in refs if text and (text in r.name.casefold())]
        if len(close) == 1:
            return close[0]
        raise LLMReplyError(
            f"project {name!r} is not one of {[r.name for r in refs]}; pass the project "
            "name exactly"
        )

    def _call(
        self, call: ToolCall, refs: Sequence[EntityRef]
    ) -> ToolResult[tuple[EntityRef, dict[Month, ForecastPoint]]]:
        """Run one ``imputationThenPredictionTool`` call; its value is the project's forecast."""
        if call.name != TOOL_NAME:
            raise LLMReplyError(f"there is no tool {call.name!r}; call {TOOL_NAME}")
        args = call.parsed_arguments()
        values = parse_data(args.get("data"))
        ref = self._resolve(args.get("project"), refs)
        points = self.tool(values)
        return ToolResult(tool_output(ref, points), (ref, points), ran=True)

    def forecast(self, plan: Plan, history: History) -> Forecast:
        refs = tuple(plan.entities) or tuple(history)
        if not refs:
            raise AgentError("the history names no project, so there is nothing to forecast")
        conversation = Conversation(
            [
                ChatMessage.system(self._system(plan.reference_month)),
                ChatMessage.user(
                    f"<Query>: {plan.question}\n<History Price>: {history_rows(history, refs)}"
                ),
            ]
        )
        # A store without a fitted model is the user's to fix, not the LLM's to retry.
        _ = self.tool.model
        results: dict[EntityRef, dict[Month, ForecastPoint]] = {}
        failures = 0
        # One call per project, the final answer, and the retries: no endless tool loops.
        for iteration in range(1, len(refs) + self.retries + 2):
            _, outcomes = tool_turn(
                self.session,
                self.name,
                conversation,
                FORECAST_TOOL,
                lambda call: self._call(call, refs),
                purpose=f"forecast (iteration {iteration})",
                iteration=iteration,
            )
            if outcomes:
                for outcome in outcomes:
                    if outcome.value is None:
                        failures += 1
                    else:
                        results[outcome.value[0]] = outcome.value[1]
                if failures > self.retries:
                    break
                continue
            missing = [r for r in refs if r not in results]
            if not missing:
                break  # the final "<Future Price>: ..." reply
            failures += 1
            self.session.retry(self.name, f"no tool call for {[r.name for r in missing]}", failures)
            if failures > self.retries:
                break
            conversation.add(
                ChatMessage.user(
                    f"Call {TOOL_NAME} with the 24 values of "
                    + ", ".join(r.name for r in missing)
                    + " before answering."
                )
            )
        missing = [r for r in refs if r not in results]
        if missing:
            raise AgentError(
                f"the Forecaster made no valid {TOOL_NAME} call for "
                f"{', '.join(r.name for r in missing)} after {failures} failed attempt(s); "
                "see the trace (`foretab ask ... --json`) for the tool errors"
            )
        with_bounds = all(p.lo is not None for pts in results.values() for p in pts.values())
        level = LEVEL if with_bounds else None
        basis = {
            ref: ForecastBasis(
                months_used=len(history[ref]),
                last_observed=history.last_month(ref),
                note=f"{TOOL_NAME} ({self.tool.name}) on the values the LLM passed",
            )
            for ref in refs
        }
        return Forecast(self.name, results, level, basis)
