"""Scale-free window features with missingness, shared by the learned models.

Every value is taken relative to the series' level (its last observation) on a log scale,
so one model serves a 9,000 yuan/m² suburb and a 120,000 yuan/m² city centre alike.
"""

from __future__ import annotations

import numpy as np

from foretab.forecast.base import last_observed


def _nan_stat(fn: object, arr: np.ndarray) -> np.ndarray:
    out = np.full(arr.shape[0], np.nan)
    ok = np.isfinite(arr).any(axis=1)
    if ok.any():
        out[ok] = fn(arr[ok], axis=1)  # type: ignore[operator]
    return out


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
    change = np.full((n, t), np.nan)
    gap = np.zeros((n, t))
    last_val = np.full(n, np.nan)
    last_at = np.zeros(n)
    for col in range(t):
        seen = np.isfinite(logp[:, col])
        pair = seen & np.isfinite(last_val)
        change[pair, col] = logp[pair, col] - last_val[pair]
        gap[pair, col] = col - last_at[pair]
        last_val[seen] = logp[seen, col]
        last_at[seen] = col
    return change, gap


def window_features(history: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """``(features [n, F], level [n], names)`` for windows ``history [n, L]``."""
    n, length = history.shape
    level, age = last_observed(history)
    observed = np.isfinite(history)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.log(history / level[:, None])  # NaN where missing
    cols: list[np.ndarray] = []
    names: list[str] = []

    def add(name: str, values: np.ndarray) -> None:
        names.append(name)
        cols.append(np.asarray(values, dtype=float))

    for lag in range(length):
        add(f"rel_lag{lag + 1}", rel[:, length - 1 - lag])
    add("log_level", np.log(level))
    add("age", age.astype(float))
    add("n_obs", observed.sum(axis=1).astype(float))
    for span in (3, 6, 12):
        add(f"obs_last{span}", observed[:, -span:].sum(axis=1).astype(float))
        add(f"mean_rel_last{span}", _nan_stat(np.nanmean, rel[:, -span:]))
        add(f"median_rel_last{span}", row_nanmedian(rel[:, -span:]))
    add("mean_rel_all", _nan_stat(np.nanmean, rel))
    add("std_rel_all", _nan_stat(np.nanstd, rel))
    add("min_rel_all", _nan_stat(np.nanmin, rel))
    add("max_rel_all", _nan_stat(np.nanmax, rel))
    # Last-k observed values regardless of gaps (the recent path, compressed).
    order = np.where(observed, np.arange(length)[None, :], -1)
    ranked = np.sort(order, axis=1)[:, ::-1]
    for k in range(1, 6):
        idx = ranked[:, k]
        has = idx >= 0
        vals = np.full(n, np.nan)
        gap = np.full(n, np.nan)
        vals[has] = rel[has, idx[has]]
        gap[has] = (length - 1 - idx[has]).astype(float)
        add(f"prev_obs{k}_rel", vals)
        add(f"prev_obs{k}_age", gap)
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
    add("slope_all", slope)
    add("slope_last12", slope12)
    return np.column_stack(cols), level, names
