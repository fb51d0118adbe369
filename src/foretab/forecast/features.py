"""Scale-free window features with missingness, shared by the learned models.

Every value is taken relative to the series' level (its last observation) on a log scale,
so one model serves a 9,000 yuan/m² suburb and a 120,000 yuan/m² city centre alike.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from foretab.forecast.base import last_observed

#: The recent spans (months) whose counts, means and medians are features.
SPANS = (3, 6, 12)


def row_nanmedian(arr: np.ndarray) -> np.ndarray:
    """Per-row median ignoring NaN (NaN for an all-NaN row), as ``np.nanmedian(axis=1)``.

    A question forecasts one or two rows, where numpy's masked-array path for
    ``nanmedian`` costs far more than the trees; sorting puts NaN last.
    """
    ordered = np.sort(arr, axis=1)
    count = np.isfinite(ordered).sum(axis=1)
    lo = np.take_along_axis(ordered, np.clip((count - 1) // 2, 0, None)[:, None], axis=1)[:, 0]
    hi = np.take_along_axis(ordered, np.clip(count // 2, 0, None)[:, None], axis=1)[:, 0]
    with np.errstate(invalid="ignore"):
        return np.where(count > 0, (lo + hi) / 2, np.nan)


def changes_since_previous(logp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(change, gap) [n, T]``: each observation's log change since the row's previous one.

    ``gap`` is how many months back that was (NaN / 0 where there is no previous one).
    ``logp`` holds log prices, NaN where nothing was observed. The market signals read a
    per-month change from it, the error scale of ``foretab.forecast.spread`` a volatility.
    """
    n, t = logp.shape
    seen = np.isfinite(logp)
    cols = np.arange(t)
    # Whole-array steps, not a loop over months: a question's one or two rows cost ~0.13 ms
    # in a 24-month loop against ~0.015 ms this way (the same values, bit for bit).
    last_at = np.maximum.accumulate(np.where(seen, cols[None, :], -1), axis=1)
    prev_at = np.concatenate([np.full((n, 1), -1), last_at[:, :-1]], axis=1)
    pair = seen & (prev_at >= 0)
    previous = np.take_along_axis(logp, np.maximum(prev_at, 0), axis=1)
    with np.errstate(invalid="ignore"):
        change = np.where(pair, logp - previous, np.nan)
    gap = np.where(pair, cols[None, :] - prev_at, 0).astype(float)
    return change, gap


def _nan_mean(arr: np.ndarray) -> np.ndarray:
    """Per-row ``np.nanmean`` (NaN for a row with nothing finite): its sums, not its wrapper."""
    missing = np.isnan(arr)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(missing, 0.0, arr).sum(axis=1) / (~missing).sum(axis=1)
    return np.where(np.isfinite(arr).any(axis=1), mean, np.nan)


def _nan_std(arr: np.ndarray) -> np.ndarray:
    """Per-row ``np.nanstd`` (NaN for a row with nothing finite), computed as numpy does."""
    missing = np.isnan(arr)
    count = (~missing).sum(axis=1, keepdims=True)
    values = np.where(missing, 0.0, arr)
    with np.errstate(invalid="ignore", divide="ignore"):
        deviation = values - values.sum(axis=1, keepdims=True) / count
        deviation[missing] = 0.0
        var = (deviation * deviation).sum(axis=1) / count[:, 0]
        var = np.where(count[:, 0] <= 0, np.nan, var)
    return np.where(np.isfinite(arr).any(axis=1), np.sqrt(var), np.nan)


@lru_cache(maxsize=8)
def _feature_names(length: int) -> tuple[str, ...]:
    names = [f"rel_lag{lag + 1}" for lag in range(length)]
    names += ["log_level", "age", "n_obs"]
    for span in SPANS:
        names += [f"obs_last{span}", f"mean_rel_last{span}", f"median_rel_last{span}"]
    names += ["mean_rel_all", "std_rel_all", "min_rel_all", "max_rel_all"]
    for k in range(1, 6):
        names += [f"prev_obs{k}_rel", f"prev_obs{k}_age"]
    return (*names, "slope_all", "slope_last12")


def window_features(history: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """``(features [n, F], level [n], names)`` for windows ``history [n, L]``.

    Whole blocks at a time (a question forecasts one or two rows, where each numpy call's
    overhead is the cost); the values are those of the column-by-column definition, bit
    for bit (``tests/forecast/test_features.py``).
    """
    n, length = history.shape
    level, age = last_observed(history)
    observed = np.isfinite(history)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.log(history / level[:, None])  # NaN where missing
    cols: list[np.ndarray] = [
        rel[:, ::-1],  # rel_lag1 .. rel_lagL
        np.log(level)[:, None],
        age.astype(float)[:, None],
        observed.sum(axis=1).astype(float)[:, None],
    ]
    # The spans' medians in one sort: NaN padding sorts last and is not counted.
    widest = min(max(SPANS), length)
    padded = np.full((len(SPANS), n, widest), np.nan)
    for i, span in enumerate(SPANS):
        recent = rel[:, -span:]
        padded[i, :, : recent.shape[1]] = recent
    medians = row_nanmedian(padded.reshape(-1, widest)).reshape(len(SPANS), n)
    for i, span in enumerate(SPANS):
        cols.append(observed[:, -span:].sum(axis=1).astype(float)[:, None])
        cols.append(_nan_mean(rel[:, -span:])[:, None])
        cols.append(medians[i][:, None])
    some = np.isfinite(rel).any(axis=1)
    with np.errstate(invalid="ignore"):
        low = np.where(some, np.fmin.reduce(rel, axis=1), np.nan)
        high = np.where(some, np.fmax.reduce(rel, axis=1), np.nan)
    cols += [_nan_mean(rel)[:, None], _nan_std(rel)[:, None], low[:, None], high[:, None]]
    # Last-k observed values regardless of gaps (the recent path, compressed).
    order = np.where(observed, np.arange(length)[None, :], -1)
    idx = np.sort(order, axis=1)[:, ::-1][:, 1:6]
    has = idx >= 0
    vals = np.where(has, np.take_along_axis(rel, np.maximum(idx, 0), axis=1), np.nan)
    gap = np.where(has, (length - 1 - idx).astype(float), np.nan)
    cols.append(np.stack([vals, gap], axis=2).reshape(n, 2 * idx.shape[1]))
    # Least-squares slope of log price per month over the observed months.
    t = np.arange(length, dtype=float)[None, :]
    w = observed.astype(float)
    cnt = w.sum(axis=1)
    y = np.where(observed, rel, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        tm = (w * t).sum(axis=1) / cnt
        ym = (w * y).sum(axis=1) / cnt
        cov = (w * (t - tm[:, None]) * (y - ym[:, None])).sum(axis=1)
        var = (w * (t - tm[:, None]) ** 2).sum(axis=1)
        slope = np.where(cnt >= 3, cov / var, np.nan)
        tw = t[:, -12:]
        w12 = w[:, -12:]
        y12 = y[:, -12:]
        c12 = w12.sum(axis=1)
        tm12 = (w12 * tw).sum(axis=1) / c12
        ym12 = (w12 * y12).sum(axis=1) / c12
        slope12 = np.where(
            c12 >= 3,
            (w12 * (tw - tm12[:, None]) * (y12 - ym12[:, None])).sum(axis=1)
            / (w12 * (tw - tm12[:, None]) ** 2).sum(axis=1),
            np.nan,
        )
    cols += [slope[:, None], slope12[:, None]]
    return np.concatenate(cols, axis=1), level, list(_feature_names(length))
