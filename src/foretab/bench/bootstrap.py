"""Percentile-bootstrap intervals, shared by the benchmarks' scores.

A benchmark figure is a mean over a sample of items or series; these intervals say how
far another sample of the same size could put it. Resampling draws whole units (a QA
item, a forecast series with all its scored cells: cells of one series are not
independent), paired across every column given.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

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


def _ratios(
    abs_error: np.ndarray, rel_error: np.ndarray, cells: np.ndarray, axis: int = -1
) -> np.ndarray:
    total = cells.sum(axis=axis)
    return np.stack([abs_error.sum(axis=axis) / total, rel_error.sum(axis=axis) / total])


def series_error_intervals(
    pred: np.ndarray, truth: np.ndarray, mask: np.ndarray | None = None, level: float = LEVEL
) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """95% intervals of the MAE and the MRE of ``foretab.forecast.metrics.score``.

    Scored as ``score`` scores (finite truth, ``mask`` if given, a missing prediction an
    error of the full value); series resampled whole. ``None`` below two scored series.
    """
    cells = np.isfinite(truth)
    if mask is not None:
        cells &= mask.astype(bool)
    with np.errstate(invalid="ignore"):
        err = np.abs(np.where(np.isfinite(pred), pred, 0.0) - truth)
    err = np.where(cells, err, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.where(cells, err / np.abs(truth), 0.0)
    count = cells.sum(axis=1)
    scored = count > 0
    if scored.sum() < 2:
        return None
    bounds = percentile_interval(
        (err.sum(axis=1)[scored], rel.sum(axis=1)[scored], count[scored].astype(float)),
        _ratios,
        level,
    )
    (mae_lo, mae_hi), (mre_lo, mre_hi) = bounds.tolist()
    return (round(mae_lo, 2), round(mae_hi, 2)), (round(mre_lo, 5), round(mre_hi, 5))
