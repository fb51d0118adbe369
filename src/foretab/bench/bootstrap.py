"""Percentile-bootstrap intervals, shared by the benchmarks' scores.

A benchmark figure is a mean over a sample of items or series; these intervals say how
far another sample of the same size could put it. Resampling draws whole units (a QA
item, a forecast series with all its scored cells: cells of one series are not
independent), paired across every column given.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from foretab.forecast.metrics import cell_errors

#: Two-sided confidence level of the intervals.
LEVEL = 0.95
#: Resamples: at this count the interval ends of 2,898 QA items moved by at most 0.2
#: points between seeds, and one interval takes about 0.2 s.
RESAMPLES = 2_000


def percentile_interval(
    columns: tuple[np.ndarray, ...],
    statistic: Callable[..., np.ndarray],
    level: float = LEVEL,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> np.ndarray:
    """``[k, 2]``: (low, high) of each of the ``k`` values ``statistic`` returns.

    ``columns`` hold one value per unit; ``statistic(*columns, axis=-1)`` reduces them.
    ``paired``: every resample draws the same units from every column. Percentile
    intervals: BCa's jackknife fails on the all-equal columns a small or perfect run has.
    """
    from scipy.stats import bootstrap

    result = bootstrap(
        columns,
        statistic,
        paired=True,
        vectorized=True,
        n_resamples=resamples,
        confidence_level=level,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    ci = result.confidence_interval
    return np.stack([np.atleast_1d(ci.low), np.atleast_1d(ci.high)], axis=-1)


def rounded_change(
    difference: float, bounds: np.ndarray, digits: int
) -> tuple[float, float, float]:
    """``(difference, low, high)`` of a paired comparison, rounded for reports."""
    low, high = (round(float(v), digits) for v in bounds)
    return round(float(difference), digits), low, high


def error_means(
    abs_error: np.ndarray, rel_error: np.ndarray, cells: np.ndarray, axis: int = -1
) -> np.ndarray:
    """``[2, ...]``: MAE and MRE from per-series sums of errors and counts of cells."""
    total = cells.sum(axis=axis)
    return np.stack([abs_error.sum(axis=axis) / total, rel_error.sum(axis=axis) / total])


def series_error_intervals(
    pred: np.ndarray, truth: np.ndarray, mask: np.ndarray | None = None, level: float = LEVEL
) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """95% intervals of the MAE and the MRE of ``foretab.forecast.metrics.score``.

    The cells ``score`` scores, with series resampled whole. ``None`` below two scored
    series.
    """
    cells, err, rel = cell_errors(pred, truth, mask)
    count = cells.sum(axis=1)
    scored = count > 0
    if scored.sum() < 2:
        return None
    bounds = percentile_interval(
        (err.sum(axis=1)[scored], rel.sum(axis=1)[scored], count[scored].astype(float)),
        error_means,
        level,
    )
    (mae_lo, mae_hi), (mre_lo, mre_hi) = bounds.tolist()
    return (round(mae_lo, 2), round(mae_hi, 2)), (round(mre_lo, 5), round(mre_hi, 5))
