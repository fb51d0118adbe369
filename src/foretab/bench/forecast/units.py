"""``foretab bench units``: the units-sold model against carrying last year's mean forward.

The corpus hold-out, as ``bench corpus`` for prices: the model is fitted on the months up
to the reference month R, forecasts R+1..R+12 for every project with a row in R−11..R
(the candidates of a future scope question, docs/design.md §4), and is scored on the
months of R+1..R+12 that have a row. The baseline is each project's mean over its rows of
R−11..R carried forward. MAE of both, their difference with a 95% paired interval that
resamples whole projects, and the 80% interval's coverage.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from foretab.bench.bootstrap import LEVEL, percentile_interval, rounded_change
from foretab.core.months import Month
from foretab.forecast.base import MAX_HORIZON
from foretab.forecast.units import UnitsModel, last_year_mean


@dataclass(frozen=True, slots=True)
class UnitsBench:
    """The hold-out scores of the units model and of its baseline."""

    projects: int
    cells: int
    model_mae: float
    baseline_mae: float
    #: model − baseline, ``(difference, low, high)`` (negative: the model is better)
    mae_change: tuple[float, float, float]
    coverage: float
    mean_width: float
    seconds: float
    level: float = LEVEL

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def units_panel(path: Path) -> tuple[np.ndarray, Month, list[tuple[str, str, str]]]:
    """``[projects, months]`` units sold (NaN: no row) of a corpus CSV, its first month."""
    import pandas as pd

    frame = pd.read_csv(path, usecols=["city", "district", "project", "month", "units_sold"])
    frame = frame.dropna(subset=["units_sold"])
    months = sorted(frame["month"].unique())
    first = Month.parse(months[0])
    last = Month.parse(months[-1])
    columns = [(first + k).iso for k in range(last.minus(first) + 1)]
    wide = frame.pivot_table(
        index=["city", "district", "project"], columns="month", values="units_sold", aggfunc="sum"
    ).reindex(columns=columns)
    keys = [tuple(map(str, k)) for k in wide.index]
    return wide.to_numpy(dtype=float), first, keys  # type: ignore[return-value]


def bench_units(path: Path, reference: Month, seed: int = 0) -> UnitsBench:
    """Fit at ``reference`` on the corpus at ``path``; score R+1..R+12 against its rows."""
    import time

    units, first, _ = units_panel(path)
    cut = reference.minus(first) + 1  # columns 0..cut-1 are history
    history, future = units[:, :cut], units[:, cut : cut + MAX_HORIZON]
    horizon = future.shape[1]
    candidates = np.isfinite(history[:, -12:]).any(axis=1) & np.isfinite(future).any(axis=1)
    started = time.perf_counter()
    model = UnitsModel.fit(history, first.month, seed)
    forecast = model.predict(history[candidates], horizon)
    seconds = time.perf_counter() - started
    truth = future[candidates]
    baseline = last_year_mean(history[candidates], horizon)
    cells = np.isfinite(truth)
    err_model = np.where(cells, np.abs(forecast.value - np.nan_to_num(truth)), 0.0)
    err_base = np.where(cells, np.abs(baseline - np.nan_to_num(truth)), 0.0)
    count = cells.sum(axis=1).astype(float)

    def change(a: np.ndarray, b: np.ndarray, n: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.atleast_1d(
            a.sum(axis=axis) / n.sum(axis=axis) - b.sum(axis=axis) / n.sum(axis=axis)
        )

    per_model, per_base = err_model.sum(axis=1), err_base.sum(axis=1)
    bounds = percentile_interval((per_model, per_base, count), change, LEVEL)
    model_mae = float(per_model.sum() / count.sum())
    base_mae = float(per_base.sum() / count.sum())
    inside = (forecast.lo <= truth) & (truth <= forecast.hi)
    return UnitsBench(
        projects=int(candidates.sum()),
        cells=int(cells.sum()),
        model_mae=round(model_mae, 3),
        baseline_mae=round(base_mae, 3),
        mae_change=rounded_change(model_mae - base_mae, bounds[0], 3),
        coverage=round(float(inside[cells].mean()), 4),
        mean_width=round(float((forecast.hi - forecast.lo)[cells].mean()), 3),
        seconds=round(seconds, 1),
    )


@dataclass(frozen=True, slots=True)
class TotalsRow:
    """One window length: project totals as a question asks them, scored on the hold-out."""

    months: int
    projects: int
    #: the store's units model as the engine answers (expected units, a month without a
    #: row counting 0 sold: ``forecast.units_source.expected_units``)
    model_mae: float
    #: last 12 months' units per month (a month without a row: 0) carried forward
    baseline_mae: float
    #: the bench's own baseline (mean over the months with a row) carried forward
    row_mean_mae: float
    #: share of projects whose recorded total lies within the ends added up
    coverage: float


@dataclass(frozen=True, slots=True)
class UnitsTotalsBench:
    """Totals as future units questions ask them: per project and per district."""

    rows: tuple[TotalsRow, ...]
    districts: int
    #: district totals over the 12 months: median |forecast − recorded| / recorded
    district_model_error: float
    district_baseline_error: float
    district_coverage: float
    seconds: float

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def bench_units_totals(
    path: Path, reference: Month, seed: int = 0, windows: tuple[int, ...] = (1, 3, 12)
) -> UnitsTotalsBench:
    """The store's units model (with its activity booster) on window totals of R+1.."""
    import time

    from foretab.forecast.units_source import expected_units

    units, first, keys = units_panel(path)
    cut = reference.minus(first) + 1
    history, future = units[:, :cut], units[:, cut : cut + MAX_HORIZON]
    horizon = future.shape[1]
    candidates = np.isfinite(history[:, -12:]).any(axis=1)
    started = time.perf_counter()
    model = UnitsModel.fit(history, first.month, seed, activity=True)
    value, lo, hi = expected_units(model.predict(history[candidates], horizon))
    seconds = time.perf_counter() - started
    truth = np.nan_to_num(future[candidates])  # recorded: a month without a row sold 0
    per_month = np.nan_to_num(history[candidates, -12:]).mean(axis=1)
    row_mean = np.nan_to_num(last_year_mean(history[candidates], horizon))
    rows = []
    for months in (w for w in windows if w <= horizon):
        recorded = truth[:, :months].sum(axis=1)
        said, low, high = (a[:, :months].sum(axis=1) for a in (value, lo, hi))
        rows.append(
            TotalsRow(
                months=months,
                projects=int(candidates.sum()),
                model_mae=round(float(np.abs(said - recorded).mean()), 3),
                baseline_mae=round(float(np.abs(months * per_month - recorded).mean()), 3),
                row_mean_mae=round(
                    float(np.abs(row_mean[:, :months].sum(axis=1) - recorded).mean()), 3
                ),
                coverage=round(float(((low <= recorded) & (recorded <= high)).mean()), 4),
            )
        )
    district_of = [k[:2] for k, c in zip(keys, candidates, strict=True) if c]
    groups: dict[tuple[str, str], list[int]] = {}
    for i, district in enumerate(district_of):
        groups.setdefault(district, []).append(i)
    recorded = np.array([truth[ix].sum() for ix in groups.values()])
    said = np.array([value[ix].sum() for ix in groups.values()])
    base = np.array([horizon * per_month[ix].sum() for ix in groups.values()])
    low = np.array([lo[ix].sum() for ix in groups.values()])
    high = np.array([hi[ix].sum() for ix in groups.values()])
    scale = np.maximum(recorded, 1.0)
    return UnitsTotalsBench(
        rows=tuple(rows),
        districts=len(groups),
        district_model_error=round(float(np.median(np.abs(said - recorded) / scale)), 4),
        district_baseline_error=round(float(np.median(np.abs(base - recorded) / scale)), 4),
        district_coverage=round(float(((low <= recorded) & (recorded <= high)).mean()), 4),
        seconds=round(seconds, 1),
    )
