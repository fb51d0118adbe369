"""``foretab bench forecast`` / ``bench impute``: every model side by side.

Both read the shared CSV formats and score over observed target cells only.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from foretab.bench.bootstrap import series_error_intervals
from foretab.bench.forecast.cell_compare import cell_rows, write_cell_details
from foretab.errors import ForecastError
from foretab.forecast import registry
from foretab.forecast.base import MAX_HORIZON, Forecaster, ValidationSplit
from foretab.forecast.data import ImputeSplit, read_forecast_csv, read_impute_csv
from foretab.forecast.metrics import Scores, score
from foretab.forecast.neural import neural_installed

#: called with (model name, "fit" | "predict" | "skipped: why")
Progress = Callable[[str, str], None]


@dataclass(frozen=True, slots=True)
class BenchRow:
    """One model's scores: the JSON object of the benchmark output."""

    model: str
    mse: float
    mae: float
    mre: float
    n_series: int
    n_points: int
    fit_seconds: float
    predict_seconds: float
    default: bool = False
    #: interval scores (corpus benchmark, models with intervals): the share of observed
    #: cells inside the central interval at ``interval_level``, and its mean width
    interval_level: float | None = None
    coverage: float | None = None
    mean_width: float | None = None
    #: the same coverage per fifth of the series by their own volatility (calmest first;
    #: ``foretab.forecast.spread``): honest intervals cover each fifth alike
    coverage_by_volatility: tuple[float, ...] | None = None
    #: 95% intervals of the MAE and the MRE over the scored series, resampled whole
    #: (``foretab.bench.bootstrap``): how far another sample of series could move them
    mae_interval: tuple[float, float] | None = None
    mre_interval: tuple[float, float] | None = None

    @classmethod
    def scored(
        cls,
        model: str,
        result: Scores,
        *,
        n_series: int,
        fit_seconds: float,
        predict_seconds: float,
        default: bool,
        intervals: tuple[tuple[float, float], tuple[float, float]] | None = None,
    ) -> BenchRow:
        """A row from a metrics ``Scores``, the measured seconds and the error intervals."""
        return cls(
            model=model,
            mse=result.mse,
            mae=result.mae,
            mre=result.mre,
            n_series=n_series,
            n_points=result.n_points,
            fit_seconds=round(fit_seconds, 3),
            predict_seconds=round(predict_seconds, 3),
            default=default,
            mae_interval=None if intervals is None else intervals[0],
            mre_interval=None if intervals is None else intervals[1],
        )

    def to_dict(self) -> dict[str, object]:
        data = asdict(self)
        if not self.default:
            del data["default"]  # the format: "default": true on one model only
        optional = ("interval_level", "coverage", "mean_width", "coverage_by_volatility")
        for key in (*optional, "mae_interval", "mre_interval"):
            if data[key] is None:
                del data[key]
        return data


@dataclass(frozen=True, slots=True)
class ForecastBench:
    """The rows, and the default model's seconds for 12 months of 3,000 series.

    ``default_predict_3000_s`` is ``None`` when the default model was not run.
    """

    rows: tuple[BenchRow, ...]
    default_predict_3000_s: float | None


def resolve_models(model: str, names: Sequence[str], kind: str) -> list[str]:
    """``all`` or a comma-separated list of registered names."""
    if model == "all":
        return list(names)
    chosen = [m.strip() for m in model.split(",") if m.strip()]
    unknown = [m for m in chosen if m not in names]
    if unknown:
        raise ForecastError(
            f"unknown {kind} {unknown[0]!r}",
            suggestions=(f"choose from: all, {', '.join(names)}",),
        )
    return chosen


def _noop(name: str, stage: str) -> None:
    del name, stage


def bench_forecast(
    train: str | Path,
    test: str | Path,
    val: str | Path | None = None,
    model: str = "all",
    seed: int = 0,
    progress: Progress = _noop,
    details: Path | None = None,
) -> ForecastBench:
    """Fit each model on ``train`` (all its months), forecast ``test``'s 12 targets.

    ``details``: also write every scored cell of every model there (``bench compare``).
    """
    train_split = read_forecast_csv(train)
    test_split = read_forecast_csv(test)
    val_split = None
    if val is not None:
        v = read_forecast_csv(val)
        val_split = ValidationSplit(v.history, v.target)
    h = min(test_split.target.shape[1], MAX_HORIZON)
    rows = []
    cells: list[dict[str, object]] = []
    timing = None
    for name in resolve_models(model, list(registry.FORECASTERS), "forecaster"):
        if name in registry.NEURAL and not neural_installed():
            progress(name, "skipped: torch / neuralforecast not installed (the [neural] extra)")
            continue
        progress(name, "fit")
        forecaster = registry.get_forecaster(name, seed)
        start = time.perf_counter()
        forecaster.fit(train_split.full, val_split)
        fit_s = time.perf_counter() - start
        progress(name, "predict")
        start = time.perf_counter()
        pred = forecaster.predict(test_split.history, h)
        pred_s = time.perf_counter() - start
        s = score(pred, test_split.target[:, :h])
        intervals = series_error_intervals(pred, test_split.target[:, :h])
        if details is not None:
            target_months = test_split.months[-test_split.target.shape[1] :][:h]
            cells += cell_rows(
                name, test_split.series_id, target_months, pred, test_split.target[:, :h]
            )
        rows.append(
            BenchRow.scored(
                name,
                s,
                n_series=len(test_split.series_id),
                fit_seconds=fit_s,
                predict_seconds=pred_s,
                default=name == registry.DEFAULT_FORECASTER,
                intervals=intervals,
            )
        )
        if name == registry.DEFAULT_FORECASTER:
            timing = time_predict_3000(forecaster, test_split.history)
    if details is not None:
        write_cell_details(details, iter(cells))
    return ForecastBench(tuple(rows), timing)


def time_predict_3000(
    forecaster: Forecaster, history: np.ndarray, n: int = 3000, h: int = MAX_HORIZON
) -> float:
    """Seconds to forecast ``h`` months for ``n`` series (histories tiled from ``history``)."""
    reps = -(-n // len(history))
    panel = np.tile(history, (reps, 1))[:n]
    forecaster.predict(panel[:10], h)  # warm-up: lazy imports, thread pools
    start = time.perf_counter()
    forecaster.predict(panel, h)
    return time.perf_counter() - start


#: share of the training file's series held out by ``selection_split``
SELECT_SHARE = 0.25


def selection_split(
    split: ImputeSplit, seed: int = 0, share: float = SELECT_SHARE
) -> tuple[np.ndarray, ImputeSplit]:
    """``(fit panel, held-out split)``: a seeded ``share`` of the series held out.

    Settings are chosen here, not on val, where the target is measured. The held-out
    series keep their file's own mask (the training file hides cells as val does: about
    12% of the observed cells, mostly one per series), so they are scored like val; the
    rest are fitted on, every observed value of them.
    """
    n = len(split.series_id)
    held = np.zeros(n, dtype=bool)
    held[np.random.default_rng(seed).permutation(n)[: round(n * share)]] = True
    test = ImputeSplit(
        series_id=tuple(s for s, h in zip(split.series_id, held, strict=True) if h),
        months=split.months,
        values=split.values[held],
        mask=split.mask[held],
    )
    return split.values[~held], test


def bench_impute(
    train: str | Path,
    test: str | Path | None,
    model: str = "all",
    seed: int = 0,
    progress: Progress = _noop,
    split_seed: int | None = None,
    transductive: bool = False,
    details: Path | None = None,
) -> list[BenchRow]:
    """Fit each imputer on ``train``'s values, fill ``test``'s masked cells, score them.

    With ``split_seed`` (and no ``test``) the scored series are instead a held-out
    quarter of ``train`` (``selection_split``): the split to choose settings on. With
    ``transductive`` the imputers also fit on the cells of the scored series that they
    are shown (the scored cells stay hidden): a protocol of its own, reported apart.
    ``details``: also write every scored cell of every model there (``bench compare``).
    """
    train_split = read_impute_csv(train)
    if (test is None) == (split_seed is None):
        raise ForecastError(
            "give either a test file or a selection split, not both or neither",
            suggestions=(
                "foretab bench impute --train TRAIN --test VAL",
                "foretab bench impute --train TRAIN --select-split 0",
            ),
        )
    if split_seed is not None:
        fit_panel, test_split = selection_split(train_split, split_seed)
    else:
        fit_panel, test_split = train_split.values, read_impute_csv(test)
    rows = []
    cells: list[dict[str, object]] = []
    for name in resolve_models(model, list(registry.IMPUTERS), "imputer"):
        progress(name, "fit")
        imputer = registry.get_imputer(name, seed)
        start = time.perf_counter()
        # every observed cell of the training series is training data
        imputer.fit(np.vstack([fit_panel, test_split.masked]) if transductive else fit_panel)
        fit_s = time.perf_counter() - start
        progress(name, "predict")
        start = time.perf_counter()
        filled = imputer.impute(test_split.masked)
        pred_s = time.perf_counter() - start
        s = score(filled, test_split.values, test_split.mask)
        intervals = series_error_intervals(filled, test_split.values, test_split.mask)
        if details is not None:
            cells += cell_rows(
                name,
                test_split.series_id,
                test_split.months,
                filled,
                test_split.values,
                test_split.mask,
            )
        rows.append(
            BenchRow.scored(
                name,
                s,
                n_series=len(test_split.series_id),
                fit_seconds=fit_s,
                predict_seconds=pred_s,
                default=name == registry.DEFAULT_IMPUTER,
                intervals=intervals,
            )
        )
    if details is not None:
        write_cell_details(details, iter(cells))
    return rows
