"""The store model: a forecaster fitted at the store's reference month R, saved with it.

Training sees only the history store (windows whose targets end at or before R), never
the future store. The fitted model forecasts whatever history it is given (the series a
question read), so a change to the history changes the forecast without retraining. It
is saved as data only (:mod:`foretab.forecast.persist`): loading a store runs no code
from it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from foretab.core.months import Month, month_range
from foretab.core.plan import EntityRef
from foretab.corpus.schema import SLOTS, STORE_COLUMNS, STORE_VALUE_COLUMN
from foretab.errors import ForecastError
from foretab.forecast.base import MAX_HORIZON, Forecaster, Place, check_panel
from foretab.forecast.market import place_keys
from foretab.forecast.windows import MAX_FIT_SERIES

if TYPE_CHECKING:
    import pandas as pd

    from foretab.store import HistoryStore

ARTIFACT_NAME = "store_model.zip"
#: What foretab < 0.2 saved (a pickle): never opened, only recognised to say so.
LEGACY_ARTIFACT = "forecaster.pkl"
#: The registry's default (``registry.DEFAULT_FORECASTER``; spelled out so that importing
#: this module does not import LightGBM).
STORE_DEFAULT_FORECASTER = "lgbm_market"
#: Months of history a store model reads before the month it forecasts from.
LOOKBACK = 24
_TRAIN_FIX = "foretab train --db DB"

#: ``(stage, done, total)``; ``total`` 0 means "no count for this stage".
TrainProgress = Callable[[str, int, int], None]


#: ``foretab train --intervals``: residuals scaled by each series' volatility, or one
#: relative width for every series (``foretab.forecast.spread``).
INTERVALS_PER_SERIES = "per-series"
#: Per series, with the grid's lower and upper halves each multiplied by a factor
#: fitted on the later origins of the backtest (``calibrate.fit_tails``).
INTERVALS_TAILS = "per-series-tails"
INTERVALS = (INTERVALS_PER_SERIES, "pooled", INTERVALS_TAILS)


def _no_progress(stage: str, done: int, total: int) -> None:
    del stage, done, total


@dataclass(frozen=True, slots=True)
class StorePanel:
    """The history store as arrays: one row per project, one column per month to R."""

    entities: tuple[EntityRef, ...]
    months: tuple[Month, ...]
    values: np.ndarray  # [n_projects, n_months], NaN = no sale that month

    def window(self, lookback: int) -> np.ndarray:
        """The last ``lookback`` months of every row, NaN-padded on the left."""
        return fit_width(self.values, lookback)


def entity_places(refs: Sequence[EntityRef] | None) -> list[Place] | None:
    """The market keys of each project (``foretab.forecast.market``)."""
    if refs is None:
        return None
    return [place_keys(r.outer, r.inner) for r in refs]


def fit_width(history: np.ndarray, width: int) -> np.ndarray:
    """Keep the last ``width`` columns; left-pad with NaN when there are fewer."""
    n, t = history.shape
    if t >= width:
        return history[:, t - width :]
    return np.concatenate([np.full((n, width - t), np.nan), history], axis=1)


def entity_rows(frame: pd.DataFrame) -> tuple[tuple[EntityRef, ...], np.ndarray]:
    """The sorted distinct entities of ``frame``'s rows, and each row's index among them.

    Per distinct entity, not per row: at 100x the corpus a frame has 6.2M rows.
    """
    keys = [STORE_COLUMNS[slot] for slot in SLOTS]
    groups = frame.groupby(keys, sort=False, dropna=False)
    group = groups.ngroup().to_numpy()
    found = [EntityRef(*k) for k in groups.size().index]
    order = sorted(range(len(found)), key=found.__getitem__)
    rank = np.empty(len(found), dtype=int)
    rank[order] = np.arange(len(found))
    return tuple(found[i] for i in order), rank[group]


def month_offsets(months: pd.Series) -> tuple[dict[str, Month], np.ndarray]:
    """Each distinct ``YYYY-MM`` parsed, and each row's index among them (per value, not row)."""
    parsed = {m: Month.parse(m) for m in months.unique()}
    return parsed, months.map({m: i for i, m in enumerate(parsed)}).to_numpy(dtype=int)


def panel_arrays(frame: pd.DataFrame, last: Month, first: Month | None = None) -> StorePanel:
    """Pivot ``open_*(db).panel()`` rows into a ``[project, month]`` array up to ``last``.

    Months after ``last`` are dropped, so a caller cannot leak the future by accident.
    """
    if frame.empty:
        return StorePanel((), (), np.empty((0, 0)))
    parsed, which = month_offsets(frame["month"])
    start = first if first is not None else min(parsed.values())
    months = tuple(month_range(start, last))
    col = np.array([m.minus(start) for m in parsed.values()], dtype=int)[which]
    keep = (col >= 0) & (col <= last.minus(start))
    refs, row = entity_rows(frame)
    values = np.full((len(refs), len(months)), np.nan)
    values[row[keep], col[keep]] = frame[STORE_VALUE_COLUMN].to_numpy(dtype=float)[keep]
    with np.errstate(invalid="ignore"):
        values[~(values > 0)] = np.nan
    return StorePanel(refs, months, values)


@dataclass(frozen=True, slots=True)
class StoreModel:
    """A fitted forecaster and what it was fitted on; forecasts any history it is given.

    ``history`` arguments are ``[n, lookback]`` arrays of monthly prices whose last column
    is the reference month; NaN marks a month without an observation.
    """

    model: str
    reference_month: Month
    lookback: int
    trained_seconds: float
    forecaster: Forecaster
    #: the first month of the training panel (LightGBM's calendar feature counts from it)
    first_month: Month
    seed: int = 0
    n_series: int = 0
    #: where the interval residuals come from (``foretab.forecast.calibrate``)
    interval_method: str = "in-sample"

    def _aligned(self, history: np.ndarray) -> np.ndarray:
        """``history`` laid out as the training panel was: first column = ``first_month``.

        Forecasters read a history as starting where their training panel started (the
        calendar feature is its last column's index), so the lookback window is padded
        back to the panel's width, or cut to it when the panel was shorter.
        """
        arr = check_panel(history)
        if arr.shape[1] != self.lookback:
            raise ForecastError(
                f"a store model reads {self.lookback} months of history ending at "
                f"{self.reference_month.iso}, got {arr.shape[1]}",
                suggestions=(f"pass a [n, {self.lookback}] array (NaN = no observation)",),
            )
        return fit_width(arr, self.reference_month.minus(self.first_month) + 1)

    @property
    def location_drift(self) -> float:
        """The recent drift (log change a month) the forecasts are moved by; 0: none."""
        return float(getattr(self.forecaster, "location_drift", 0.0))

    @property
    def reads_places(self) -> bool:
        """Whether forecasts use the projects' district and city (pass ``refs``)."""
        return self.forecaster.uses_places

    def predict(
        self,
        history: np.ndarray,
        h: int = MAX_HORIZON,
        refs: Sequence[EntityRef] | None = None,
    ) -> np.ndarray:
        """Point forecasts ``[n, h]`` for months R+1..R+h (NaN for an all-NaN row).

        ``refs`` (one per row) give a model that ``reads_places`` each project's district
        and city; without them it forecasts from the series and the corpus signals only.
        """
        return self.forecaster.predict(self._aligned(history), h, entity_places(refs))

    def predict_quantiles(
        self,
        history: np.ndarray,
        h: int,
        quantiles: tuple[float, ...],
        refs: Sequence[EntityRef] | None = None,
    ) -> np.ndarray:
        """``[n, h, len(quantiles)]``; models without intervals raise ``ForecastError``."""
        return self.forecaster.predict_quantiles(
            self._aligned(history), h, quantiles, entity_places(refs)
        )

    def to_bytes(self) -> bytes:
        """The data-only model file (zip: JSON manifest + LightGBM text models)."""
        from foretab.forecast.persist import (
            FORMAT,
            FORMAT_VERSION,
            Manifest,
            forecaster_state,
            write_archive,
        )

        fields, boosters, arrays = forecaster_state(self.model, self.forecaster)
        manifest = Manifest.model_validate(
            {
                "format": FORMAT,
                "format_version": FORMAT_VERSION,
                "model": self.model,
                "reference_month": self.reference_month.iso,
                "first_month": self.first_month.iso,
                "lookback": self.lookback,
                "trained_seconds": round(self.trained_seconds, 3),
                "seed": self.seed,
                "n_series": self.n_series,
                "interval_method": self.interval_method,
                **fields,
            }
        )
        return write_archive(manifest, boosters, arrays)

    @classmethod
    def from_bytes(cls, data: bytes) -> StoreModel:
        """Read a model file; anything but a valid one raises ``ForecastError``."""
        from foretab.forecast.persist import read_archive, restore_forecaster

        why = "the store's model file is invalid"
        manifest, boosters, arrays = read_archive(data, why)
        forecaster = restore_forecaster(manifest, boosters, why, arrays)
        return cls(
            model=manifest.model,
            reference_month=Month.parse(manifest.reference_month),
            lookback=manifest.lookback,
            trained_seconds=manifest.trained_seconds,
            forecaster=forecaster,
            first_month=Month.parse(manifest.first_month),
            seed=manifest.seed,
            n_series=manifest.n_series,
            interval_method=manifest.interval_method,
        )


def fit_store_model(
    panel: StorePanel,
    reference_month: Month,
    model: str | None = None,
    seed: int = 0,
    progress: TrainProgress = _no_progress,
    calibrate: bool = True,
    intervals: str = INTERVALS_PER_SERIES,
) -> StoreModel:
    """Fit ``model`` on windows of ``panel`` (every training target at or before R).

    Any registered forecaster fits (the corpus benchmark scores them all); only the
    data-only persistable ones can be saved (``train_store_model`` checks first).
    With ``calibrate``, a model with intervals gets them from a rolling backtest
    (:mod:`foretab.forecast.calibrate`), which costs a second, smaller fit; ``intervals``
    says whether residuals are scaled per series (``per-series``) or ``pooled``.
    """
    check_intervals(intervals)
    if not panel.months or panel.months[-1] != reference_month:
        raise ForecastError(
            f"the panel must end at the reference month {reference_month.iso}",
            suggestions=("build it with panel_arrays(frame, reference_month)",),
        )
    from foretab.forecast.calibrate import can_backtest
    from foretab.forecast.gbm import LightGBMForecaster  # heavy: LightGBM
    from foretab.forecast.registry import get_forecaster

    name = model or STORE_DEFAULT_FORECASTER
    forecaster = get_forecaster(name, seed)
    start = time.perf_counter()
    n = len(panel.entities)
    capped = isinstance(forecaster, LightGBMForecaster) and n > MAX_FIT_SERIES
    sampled = f" (windows from a seeded {MAX_FIT_SERIES:,} of them)" if capped else ""
    stage = f"fitting {name} on {n:,} series × {len(panel.months)} months{sampled}"
    progress(stage, 0, 0)
    forecaster.on_progress = lambda done, total: progress(stage, done, total)
    places = entity_places(panel.entities)
    if isinstance(forecaster, LightGBMForecaster):
        forecaster.max_series = MAX_FIT_SERIES  # bounded memory past the real corpus's size
        if calibrate:
            # A backtest will set the intervals: residuals on its own rows would be wasted.
            forecaster.in_sample_residuals = not can_backtest(len(panel.months))
    try:
        if forecaster.uses_places:
            forecaster.fit(panel.values, places=places)  # type: ignore[call-arg]
        else:
            forecaster.fit(panel.values)
    finally:
        forecaster.on_progress = None
    method = "in-sample"
    if calibrate and forecaster.supports_quantiles and hasattr(forecaster, "residual_quantiles"):
        from foretab.forecast.calibrate import DRIFT_ORIGINS, TooShort, conformal_quantiles

        progress(
            f"calibrating {name}'s intervals on a {BACKTEST_ORIGINS}-origin backtest "
            f"and its drift on the last {DRIFT_ORIGINS} months",
            0,
            0,
        )
        try:
            cal = conformal_quantiles(
                panel.values,
                lambda: _calibration_copy(name, seed, rounds=CALIBRATION_ROUNDS),
                LOOKBACK,
                n_origins=BACKTEST_ORIGINS,
                places=places,
                adaptive=intervals in (INTERVALS_PER_SERIES, INTERVALS_TAILS),
                make_drift_copy=lambda: _calibration_copy(
                    name, seed, DRIFT_ROW_FRACTION, DRIFT_ROUNDS
                ),
                max_series=MAX_FIT_SERIES,
                seed=seed,
                tails=intervals == INTERVALS_TAILS,
            )
        except TooShort:  # under 15 months of history: in-sample residuals, and it says so
            cal = None
        if cal is not None:
            forecaster.residual_quantiles = cal.residual_quantiles  # type: ignore[attr-defined]
            forecaster.spread = cal.spread  # type: ignore[attr-defined]
            if hasattr(forecaster, "location_drift"):
                forecaster.location_drift = cal.drift
            if hasattr(forecaster, "tails"):
                forecaster.tails = cal.tails
            method = cal.method
    return StoreModel(
        model=name,
        reference_month=reference_month,
        lookback=LOOKBACK,
        trained_seconds=time.perf_counter() - start,
        forecaster=forecaster,
        first_month=panel.months[0],
        seed=seed,
        n_series=len(panel.entities),
        interval_method=method,
    )


#: Backtest origins R−18 … R−1: every horizon gets at least 7 origins (12 left the
#: 12-month horizon one, and the intervals under-covered: docs/experiments.md); the
#: calibration copy fits on the months before R−18.
BACKTEST_ORIGINS = 18
#: Share of the training rows the calibration copy of a LightGBM model fits on (it only
#: measures residuals; a slightly weaker copy errs towards wider intervals); the coverage
#: of other shares is in docs/experiments.md.
CALIBRATION_ROW_FRACTION = 0.3


def check_intervals(intervals: str) -> None:
    """Refuse an unknown ``--intervals`` choice, naming the known ones."""
    if intervals not in INTERVALS:
        raise ForecastError(
            f"unknown interval calibration {intervals!r}",
            suggestions=tuple(f"foretab train --db DB --intervals {k}" for k in INTERVALS),
        )


#: Boosting rounds of the calibration copy, at a rate that keeps rounds x rate (``None``:
#: the model's own). 125 at 0.2 instead of 250 at 0.1 takes 7.8 s of CPU for the
#: calibration stage instead of 11.4 s, which pays for the drift copy.
CALIBRATION_ROUNDS: int | None = 125
#: The drift copy (``calibrate.recent_drift``) only yields one median per horizon: a
#: tenth of the rows and half the rounds at twice the rate: on the corpus −0.098%/month
#: in 3.2 s of CPU (250 rounds: −0.119% in 6.8 s; 0.3 of the rows: −0.12%). The estimate
#: moves by about ±0.02 points with the copy's settings.
DRIFT_ROW_FRACTION = 0.1
DRIFT_ROUNDS = 125


def _calibration_copy(
    name: str, seed: int, row_fraction: float | None = None, rounds: int | None = None
) -> Forecaster:
    """A copy of ``name`` for a backtest: fewer rows (and, given, fewer faster rounds)."""
    from foretab.forecast.gbm import LightGBMForecaster
    from foretab.forecast.registry import get_forecaster

    forecaster = get_forecaster(name, seed)
    if isinstance(forecaster, LightGBMForecaster):
        share = CALIBRATION_ROW_FRACTION if row_fraction is None else row_fraction
        forecaster.row_fraction = min(forecaster.row_fraction, share)
        if rounds is not None:  # same rounds x rate: a comparable, coarser fit
            budget = forecaster.default_rounds * forecaster.default_learning_rate
            forecaster.default_rounds = rounds
            forecaster.default_learning_rate = budget / rounds
        forecaster.in_sample_residuals = False  # the backtest measures its residuals
        forecaster.max_series = MAX_FIT_SERIES
    return forecaster


def store_reference(store: HistoryStore) -> Month:
    """The store's reference month, or an error saying how to set one."""
    ref = store.reference_month
    if ref is None:
        raise ForecastError(
            "the store has no reference month, so there is no future to forecast",
            suggestions=("re-ingest with `foretab ingest PATH --db DB --reference-month YYYY-MM`",),
        )
    return ref


# The default forecaster cuts its first window at column 5 and needs a later month to
# learn from (``forecast.windows.cut_windows``): fewer months leave no training row.
MIN_TRAINING_MONTHS = 7


class HistoryTooShortError(ForecastError):
    """The store holds too few months to fit a forecaster on (the store itself is fine)."""


def require_training_history(panel: StorePanel) -> None:
    """Refuse, naming the months there are, a history too short to fit a forecaster on."""
    months = panel.months
    if len(months) >= MIN_TRAINING_MONTHS:
        return
    held = f"{months[0].iso}..{months[-1].iso}" if months else "none"
    raise HistoryTooShortError(
        f"the store's history is too short to fit a forecaster: {len(months)} month(s) "
        f"up to the reference month ({held}); training needs at least "
        f"{MIN_TRAINING_MONTHS}. The store answers questions about those months; "
        "questions about the future are refused until a model is trained. Ingest a "
        "longer history, then run `foretab train --db DB`."
    )


def train_store_model(
    db: str,
    model: str | None = None,
    seed: int = 0,
    progress: TrainProgress = _no_progress,
    *,
    intervals: str = INTERVALS_PER_SERIES,
) -> StoreModel:
    """Fit on the history store at ``db`` up to its reference month, save it there."""
    from foretab.forecast.persist import require_persistable
    from foretab.store import open_history

    require_persistable(model or STORE_DEFAULT_FORECASTER)  # before a long fit, not after
    check_intervals(intervals)
    with open_history(db) as store:
        ref = store_reference(store)
        progress("reading the history store", 0, 0)
        panel = panel_arrays(store.panel(), ref)
        require_training_history(panel)
        fitted = fit_store_model(panel, ref, model, seed, progress, intervals=intervals)
        progress("saving the model with the store", 0, 0)
        store.save_artifact(ARTIFACT_NAME, fitted.to_bytes())
        from foretab.forecast.units_store import train_units_model

        progress("fitting the units-sold model (LightGBM Poisson + quantile boosters)", 0, 0)
        train_units_model(store, ref, seed)
    return fitted


def load_store_model(store: HistoryStore, model: str | None = None) -> StoreModel:
    """The model saved with ``store``; never retrains. ``model`` (if given) must match."""
    from foretab.forecast.lightgbm_import import import_for_prediction

    import_for_prediction()
    data = store.load_artifact(ARTIFACT_NAME)
    if data is None:
        legacy = store.load_artifact(LEGACY_ARTIFACT) is not None
        why = (
            "the store's model file is invalid: only an old pickle model "
            f"({LEGACY_ARTIFACT}) is stored, which foretab no longer opens"
            if legacy
            else "the store's model file is invalid: no model is stored with this store"
        )
        raise ForecastError(why, suggestions=(f"run `{_TRAIN_FIX}` to fit and save one",))
    try:
        fitted = StoreModel.from_bytes(data)
    except ForecastError as exc:
        raise ForecastError(
            exc.message, suggestions=(f"run `{_TRAIN_FIX}` to fit and save a new one",)
        ) from exc
    ref = store_reference(store)
    if fitted.reference_month != ref:
        raise ForecastError(
            f"the store's model was trained at {fitted.reference_month.iso}, but the "
            f"store's reference month is {ref.iso}",
            suggestions=(f"run `{_TRAIN_FIX}` to refit it",),
        )
    if model is not None and fitted.model != model:
        raise ForecastError(
            f"the store's model is {fitted.model!r}, not {model!r}",
            suggestions=(f"run `foretab train --db DB --model {model}`",),
        )
    return fitted
