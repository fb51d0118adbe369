"""Where future values come from: a forecaster, the future store (oracle), or persistence."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

from foretab.answer import Series
from foretab.errors import ForecastError, QuestionError
from foretab.months import Month
from foretab.parse.plan import ProjectRef
from foretab.store import HistoryStore, open_future

FutureMode = Literal["model", "oracle", "none"]


class FutureSource(Protocol):
    """Gives values for months after the reference month."""

    name: str

    def values(
        self, history: Series, projects: Sequence[ProjectRef], months: Sequence[Month]
    ) -> dict[ProjectRef, dict[Month, float]]: ...


class Persistence:
    """GH-NF: every future month equals the last observed price."""

    name = "none"

    def values(
        self, history: Series, projects: Sequence[ProjectRef], months: Sequence[Month]
    ) -> dict[ProjectRef, dict[Month, float]]:
        out: dict[ProjectRef, dict[Month, float]] = {}
        for ref in projects:
            observed = history.get(ref, {})
            if not observed:
                raise ForecastError(
                    f"{ref.project} ({ref.district}, {ref.city}) has no observed price in the "
                    "history the question reads, so there is nothing to carry forward."
                )
            last = observed[max(observed)]
            out[ref] = {m: last for m in months}
        return out


class Oracle:
    """GH+GF: read the future store. Evaluation only; the trace says so."""

    name = "oracle"

    def __init__(self, db: str) -> None:
        with open_future(db) as store:
            panel = store.panel()
        self._values: dict[tuple[str, str, str], dict[Month, float]] = {}
        for city, district, project, month, price in panel.itertuples(index=False, name=None):
            self._values.setdefault((city, district, project), {})[Month.parse(month)] = float(
                price
            )

    def values(
        self, history: Series, projects: Sequence[ProjectRef], months: Sequence[Month]
    ) -> dict[ProjectRef, dict[Month, float]]:
        out: dict[ProjectRef, dict[Month, float]] = {}
        for ref in projects:
            known = self._values.get((ref.city, ref.district, ref.project), {})
            out[ref] = {m: known[m] for m in months if m in known}
        return out


class Model:
    """Forecasts from the model persisted with the store (``foretab train``).

    Training forecasts every project of the history store for R+1..R+12 from the same
    history the engine reads, so answering is a lookup: no model runs per question.
    """

    def __init__(self, store: HistoryStore, model: str | None) -> None:
        from foretab.forecast.store import load_store_forecaster

        self._forecaster = load_store_forecaster(store, model)
        self.name = f"model:{self._forecaster.model}"

    def values(
        self, history: Series, projects: Sequence[ProjectRef], months: Sequence[Month]
    ) -> dict[ProjectRef, dict[Month, float]]:
        return self._forecaster.forecast(projects, months)


def future_source(mode: str, db: str, store: HistoryStore, model: str | None) -> FutureSource:
    """The source for ``--future model|oracle|none``."""
    if mode == "model":
        return Model(store, model)
    if mode == "oracle":
        return Oracle(db)
    if mode == "none":
        return Persistence()
    raise QuestionError(f"Unknown --future {mode!r}; use model, oracle or none.")
