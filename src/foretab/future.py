"""Future sources: where values for months after R come from (the forecast stage).

``ModelSource`` forecasts the series the reader returned with the model fitted for the
store; ``Persistence`` carries the last observed value forward (GH-NF); ``Oracle`` reads
the future store (GH+GF, evaluation only). All three implement
``foretab.core.stages.FutureSource``.
"""

from __future__ import annotations

from typing import Literal

from foretab.core.plan import EntityRef, Plan
from foretab.core.series import Forecast, ForecastBasis, ForecastPoint, History
from foretab.core.stages import FutureSource
from foretab.errors import ForecastError, QuestionError
from foretab.months import Month
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
                    f"{ref.name} ({ref.inner}, {ref.outer}) has no observed price in the "
                    "history the question reads, so there is nothing to carry forward."
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
        for city, district, project, month, price in panel.itertuples(index=False, name=None):
            ref = EntityRef(city, district, project)
            self._values.setdefault(ref, {})[Month.parse(month)] = float(price)

    def forecast(self, plan: Plan, history: History) -> Forecast:
        del history  # the oracle ignores what was read: that is the point of the ablation
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
