"""The rows of a ``forecast()`` call, computed on the engine's side of the guard.

For the table's entities this reads the history a forecast question reads — the
forecaster's 24 months up to R from the table's group (all its year tables), with the
engine's own history query (``foretab.sql.build``) through the same guard — and runs the
store's fitted model on it exactly as the question engine's forecast stage does
(``ModelSource.forecast_series``). So ``forecast('t')`` gives, for every entity of ``t``,
the numbers ``foretab ask`` gives for it. The future store is never opened.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from sqlglot import exp

from foretab.core.plan import EntityRef
from foretab.errors import GuardError, QueryError
from foretab.sql.forecast_call import ForecastCall, ForecastRows, ForecastSupport

if TYPE_CHECKING:
    from foretab.core.catalog import CatalogEntry
    from foretab.core.months import Month
    from foretab.core.series import History
    from foretab.forecast.source import SeriesModel
    from foretab.sql.guard import GuardedExecutor
    from foretab.sql.result import QueryResult
    from foretab.store import HistoryStore


class StoreForecasts:
    """``forecast()`` for one open history store (a ``ForecastProvider``).

    ``model`` loads the store's fitted model on first use (default: the one saved with
    the store, as ``foretab ask`` loads it); an engine passes its own, so both forecast
    with the same object.
    """

    def __init__(self, store: HistoryStore, model: Callable[[], SeriesModel] | None = None) -> None:
        from foretab.forecast.base import MAX_HORIZON

        self.store = store
        self.cols = store.schema.columns
        self.support = ForecastSupport(MAX_HORIZON, self.cols.entity)
        self._catalog: dict[str, CatalogEntry] | None = None
        self._load = model
        self._model: SeriesModel | None = None

    def use(self, model: Callable[[], SeriesModel]) -> None:
        """Load the model from ``model`` (an engine's own) instead of the store's default."""
        if self._model is None:
            self._load = model

    def load(self) -> None:
        self.model()

    def model(self) -> SeriesModel:
        if self._model is None:
            if self._load is not None:
                self._model = self._load()
            else:
                from foretab.forecast.store import load_store_model

                self._model = load_store_model(self.store)
        return self._model

    def catalog(self) -> dict[str, CatalogEntry]:
        if self._catalog is None:
            self._catalog = {e.table_name.lower(): e for e in self.store.catalog()}
        return self._catalog

    def rows(
        self, calls: Sequence[ForecastCall], guard: GuardedExecutor
    ) -> tuple[ForecastRows, ...]:
        return tuple(self._rows(call, guard) for call in calls)

    def _rows(self, call: ForecastCall, guard: GuardedExecutor) -> ForecastRows:
        from foretab.forecast.source import ModelSource
        from foretab.forecast.store import store_reference

        entry = self.catalog().get(call.table)
        if entry is None:  # the worker checked the catalog; the store may have been replaced
            raise GuardError(
                "forecast-table",
                f"{call.table!r} is not a history table of the store's catalog; run "
                "`foretab tables` to list them",
            )
        reference = store_reference(self.store)
        model = self.model()
        refs = self._entities(entry, call, guard)
        history = self._history(entry, refs, reference, model.lookback, guard)
        # An entity with nothing observed in the model's window has no forecast (a
        # question about it is refused); the relation simply has no rows for it.
        readable = [ref for ref in refs if _observed(history, ref, reference, model.lookback)]
        months = [reference + k for k in range(1, call.horizon + 1)]
        forecast = ModelSource(model, level=call.level).forecast_series(
            readable, reference, months, history
        )
        names: list[str] = []
        firsts: list[object] = []
        values: list[float] = []
        lows: list[float | None] = []
        highs: list[float | None] = []
        for ref in readable:
            for month in months:
                point = forecast.points[ref][month]
                names.append(ref.name)
                firsts.append(month.first_day)
                values.append(point.value)
                lows.append(point.lo)
                highs.append(point.hi)
        return ForecastRows(
            self.cols.entity,
            tuple(names),
            tuple(firsts),  # type: ignore[arg-type]
            tuple(values),
            tuple(lows),
            tuple(highs),
        )

    def _entities(
        self, entry: CatalogEntry, call: ForecastCall, guard: GuardedExecutor
    ) -> list[EntityRef]:
        """The table's entities (those ``entities =>`` names), in name order."""
        from foretab.backend import column, table

        name = column(self.cols.entity)
        query = exp.select(name).distinct().from_(table(entry.table_name)).order_by(name.copy())
        result = guard.execute(query)
        if result.truncated:
            raise QueryError(
                f"{entry.table_name} has more than {len(result.rows):,} "
                f"{self.cols.entity} values; name some with entities => [...]"
            )
        found = [str(row[0]) for row in result.rows if row[0] is not None]
        if call.entities is not None:
            missing = [n for n in call.entities if n not in set(found)]
            if missing:
                raise GuardError(
                    "forecast-option",
                    f"entities => names {missing[0]!r}, which is not a {self.cols.entity} of "
                    f"{entry.table_name}; list them with SELECT DISTINCT {self.cols.entity} "
                    f"FROM {entry.table_name}",
                )
            found = sorted(call.entities)
        return [EntityRef(entry.outer, entry.inner, n) for n in found]

    def _history(
        self,
        entry: CatalogEntry,
        refs: Sequence[EntityRef],
        reference: Month,
        lookback: int,
        guard: GuardedExecutor,
    ) -> History:
        from foretab.core.series import History
        from foretab.read.reader import rows_to_history
        from foretab.sql.build import history_query

        first = reference - (lookback - 1)
        group = [
            e
            for e in self.catalog().values()
            if (e.outer, e.inner) == (entry.outer, entry.inner) and first.year <= e.year
        ]
        group.sort(key=lambda e: e.year)
        query = history_query(group, refs, first, reference, self.cols)
        if query is None:
            return History.empty(refs)
        result = guard.execute(query.sql(guard.dialect), query.params)
        if result.truncated:
            raise QueryError(
                f"the history of {entry.table_name}'s {len(refs):,} series is more than one "
                f"query may return ({len(result.rows):,} rows); name fewer with entities => "
                "[...] or raise the row cap (--max-rows)"
            )
        return rows_to_history(result, refs, cols=self.cols)


def _observed(history: History, ref: EntityRef, reference: Month, lookback: int) -> bool:
    first = reference - (lookback - 1)
    return any(first <= month <= reference for month in history[ref])


def run_query(
    db: str,
    sql: str,
    params: Sequence[object] | None = None,
    *,
    max_rows: int,
    timeout_s: float,
) -> QueryResult:
    """``foretab.sql.guard.run_query`` with ``forecast()`` available (``foretab sql``)."""
    from foretab.sql.guard import GuardedExecutor
    from foretab.store import open_history

    with open_history(db) as store:
        forecasts = StoreForecasts(store)
        with GuardedExecutor(
            store, max_rows=max_rows, timeout_s=timeout_s, forecasts=forecasts
        ) as guard:
            return guard.execute(sql, params)
