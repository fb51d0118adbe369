"""Future sources: where values for months after R come from (the forecast stage).

``ModelSource`` (``forecast.source``) forecasts the series the reader returned with the
model fitted for the store; ``Persistence`` carries the last observed value forward
(GH-NF); ``Oracle`` reads the future store (GH+GF, evaluation only). All three implement
``foretab.core.stages.FutureSource``; ``LazySource`` loads one of them on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from foretab.core.months import Month
from foretab.core.plan import EntityRef, Language, Metric, Plan
from foretab.core.series import Forecast, ForecastBasis, ForecastPoint, History
from foretab.core.stages import FutureSource
from foretab.errors import ForecastError, QuestionError
from foretab.store import HistoryStore, open_future

FutureMode = Literal["model", "oracle", "none"]
FUTURE_MODES: tuple[str, ...] = ("model", "oracle", "none")


class Persistence:
    """GH-NF: every future month equals the last observed value."""

    name = "none"

    def forecast(self, plan: Plan, history: History) -> Forecast:
        months = plan.future_months
        points: dict[EntityRef, dict[Month, ForecastPoint]] = {}
        basis: dict[EntityRef, ForecastBasis] = {}
        for ref in plan.entities:
            observed = history[ref]
            if not observed:
                raise ForecastError(
                    f"{ref.name} ({ref.inner}, {ref.outer}) has no observed "
                    f"{plan.wording.value} in the history the question reads, so there is "
                    "nothing to carry forward."
                )
            last = max(observed)
            points[ref] = {m: ForecastPoint(observed[last]) for m in months}
            basis[ref] = ForecastBasis(len(observed), last, note="last observed value")
        return Forecast(self.name, points, None, basis)


class Oracle:
    """GH+GF: read the future store. Evaluation only; the trace says so."""

    name = "oracle"

    def __init__(self, db: str, generation: str | None = None) -> None:
        # ``generation``: the history store's, so the oracle reads the same ingest's future.
        with open_future(db, generation) as store:
            panel = store.panel()
        self._values: dict[EntityRef, dict[Month, float]] = {}
        for outer, inner, name, month, value in panel.itertuples(index=False, name=None):
            ref = EntityRef(outer, inner, name)
            self._values.setdefault(ref, {})[Month.parse(month)] = float(value)

    def forecast(self, plan: Plan, history: History) -> Forecast:
        del history  # the oracle ignores what was read: that is the point of the ablation
        if plan.metric is Metric.UNITS:
            # a QuestionError: with this source, the question cannot be answered at all
            words = plan.wording
            if plan.language is Language.ZH:
                raise QuestionError(
                    f"未来的{words.summed_zh}不从未来库（oracle）读取，它只用于{words.value_zh}；"
                    f"请用 `--future model`（本库的{words.summed_zh}模型）"
                )
            raise QuestionError(
                f"future {words.summed} are not read from the future store (the oracle "
                f"holds {words.value}s only); ask with `--future model`, the store's units model"
            )
        months = plan.future_months
        points = {}
        for ref in plan.entities:
            known = self._values.get(ref, {})
            points[ref] = {m: ForecastPoint(known[m]) for m in months if m in known}
        return Forecast(self.name, points)


def future_source(
    mode: str, db: str, store: HistoryStore, model: str | None, level: float | None = None
) -> FutureSource:
    """The source for ``--future model|oracle|none`` (intervals at ``level``, default 80%)."""
    if mode == "model":
        from foretab.forecast.source import DEFAULT_LEVEL, ModelSource

        return ModelSource.for_store(store, model, level=level or DEFAULT_LEVEL)
    if mode == "oracle":
        return Oracle(db, store.generation)
    if mode == "none":
        return Persistence()
    raise QuestionError(f"Unknown --future {mode!r}; use model, oracle or none.")


class LazySource:
    """A future source loaded on first use.

    History questions never need a model or the future store, so an engine over a store
    without a trained model still answers them.
    """

    def __init__(
        self, load: Callable[[], FutureSource], mode: str = "model", model: str | None = None
    ) -> None:
        self._load = load
        self._source: FutureSource | None = None
        #: what it loads: ``--future`` ``model`` / ``oracle`` / ``none``, and the model's name
        self.mode = mode
        self.model = model

    def loaded(self) -> FutureSource:
        if self._source is None:
            self._source = self._load()
        return self._source

    def if_loaded(self) -> FutureSource | None:
        return self._source

    @property
    def name(self) -> str:
        return self.loaded().name

    def forecast(self, plan: Plan, history: History) -> Forecast:
        return self.loaded().forecast(plan, history)
