"""Training windows cut from a panel: history of fixed length, then ``h`` targets.

Every learned forecaster trains on the same windows, so "train only on information
available at month R" is one rule: a window's targets must lie inside the panel given.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from foretab.forecast.base import MAX_HORIZON

#: The most series a store model's fits cut training rows from (the price model, its
#: calibration backtest and the units model); past it, a seeded sample (``sample_series``)
#: chosen before any window or feature row is built. A fit's memory grows with the series
#: it reads (~0.1 MB each: 0.7 GB for the 1x scale corpus's 4,624 series, 4.7 GB for
#: K = 10's 45,878, docs/scale.md), so without a cap 100x the corpus needs ~30 GB. The real
#: corpus (5,634 projects) and the 1x scale corpus stay far below it: nothing changes for
#: them; 20,000 keeps a fit near 2.5 GB at any size.
MAX_FIT_SERIES = 20_000


def sample_series(n: int, cap: int | None, seed: int) -> np.ndarray | None:
    """Sorted indices of a seeded sample of ``cap`` of ``n`` series; ``None``: keep all.

    ``None`` whenever ``n <= cap`` (or there is no cap), so a fit at or below the cap
    draws nothing and is the same fit as without one.
    """
    if cap is None or n <= cap:
        return None
    return np.sort(np.random.default_rng(seed).choice(n, size=cap, replace=False))


@dataclass(frozen=True, slots=True)
class Windows:
    """Windows cut from a panel.

    ``history [m, L]`` is NaN-padded on the left when the panel is shorter; ``target
    [m, H]`` is NaN where unobserved or beyond the panel.
    """

    history: np.ndarray
    target: np.ndarray
    end: np.ndarray  # the panel column each window's history ends at
    row: np.ndarray  # the panel row (series) each window is cut from


def cut_windows(
    panel: np.ndarray,
    lookback: int,
    horizon: int = MAX_HORIZON,
    min_observed: int = 1,
    min_end: int = 5,
) -> Windows:
    """All windows ending at column ``e`` (``min_end <= e < T-1``) with >= 1 observed target.

    ``min_observed`` history observations are required so every window has a level.
    """
    n, t = panel.shape
    padded = np.concatenate(
        [np.full((n, lookback), np.nan), panel, np.full((n, horizon), np.nan)], axis=1
    )
    hist, targ, ends, rows = [], [], [], []
    for end in range(min_end, t - 1):
        h = padded[:, end + 1 : end + 1 + lookback]
        y = padded[:, lookback + end + 1 : lookback + end + 1 + horizon]
        keep = (np.isfinite(h).sum(axis=1) >= min_observed) & np.isfinite(y).any(axis=1)
        hist.append(h[keep])
        targ.append(y[keep])
        ends.append(np.full(int(keep.sum()), end))
        rows.append(np.flatnonzero(keep))
    if not hist:
        empty = np.empty(0, int)
        return Windows(np.empty((0, lookback)), np.empty((0, horizon)), empty, empty)
    return Windows(*(np.concatenate(a) for a in (hist, targ, ends, rows)))


def history_ends(history: np.ndarray) -> np.ndarray:
    """``[n]``: the panel column each history ends at, as ``Windows.end`` counts them.

    Histories given to a fitted model start where its training panel starts, so they end
    at column T-1 of their own width.
    """
    return np.full(history.shape[0], history.shape[1] - 1)
