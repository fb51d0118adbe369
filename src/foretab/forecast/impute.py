"""Imputers: linear interpolation, and LightGBM learning corrections to it.

The learned imputer trains self-supervised: it hides random observed cells of its
training panel and learns ``log(true / interpolated)`` from the neighbourhood of each
(and from how noisy the row is and how far its neighbours sit off their own lines).
Every observed cell is hidden once, in one of a few rounds; a few such models, each on its
own folds, are averaged.
"""

from __future__ import annotations

from typing import Self

import lightgbm as lgb
import numpy as np

from foretab.forecast.base import Imputer, check_panel
from foretab.forecast.features import changes_since_previous, row_nanmedian


def interpolate_linear(panel: np.ndarray) -> np.ndarray:
    """Linear interpolation inside each row, constant extension at both ends."""
    out = panel.copy()
    cols = np.arange(panel.shape[1])
    for i in range(panel.shape[0]):
        ok = np.isfinite(panel[i])
        if ok.any() and not ok.all():
            out[i] = np.interp(cols, cols[ok], panel[i, ok])
    return out


class LinearImputer(Imputer):
    """Straight lines between observed neighbours; flat beyond the first/last one."""

    alias = "linear"

    def _impute(self, panel: np.ndarray) -> np.ndarray:
        return interpolate_linear(panel)


def _neighbours(panel: np.ndarray, k: int = 2) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """For every cell, the values and distances of the k previous and k next observations.

    Both are NaN where there is no such observation.
    """
    n, t = panel.shape
    observed = np.isfinite(panel)
    vals: list[np.ndarray] = []
    dists: list[np.ndarray] = []
    for direction in (-1, 1):
        idx = np.full((n, t, k), -1, dtype=int)
        for j in range(t):
            rng = range(j - 1, -1, -1) if direction < 0 else range(j + 1, t)
            found = np.zeros(n, dtype=int)
            for c in rng:
                hit = observed[:, c] & (found < k)
                if not hit.any() and (found >= k).all():
                    break
                rows = np.nonzero(hit)[0]
                idx[rows, j, found[rows]] = c
                found[rows] += 1
        for r in range(k):
            ix = idx[:, :, r]
            has = ix >= 0
            v = np.full((n, t), np.nan)
            d = np.full((n, t), np.nan)
            rows, cols = np.nonzero(has)
            v[rows, cols] = panel[rows, ix[rows, cols]]
            d[rows, cols] = np.abs(ix[rows, cols] - cols)
            vals.append(v)
            dists.append(d)
    return vals, dists


def market_index(panel: np.ndarray) -> np.ndarray:
    """``[T]``: the panel's cumulated median per-month log change (a market price index).

    Months with fewer than ``MIN_COUNT`` changes count as flat. The index is the panel's
    own (the series being filled and their peers), so it needs no fitted state.
    """
    from foretab.forecast.market import MIN_COUNT, per_month_change

    with np.errstate(invalid="ignore", divide="ignore"):
        change = per_month_change(np.log(panel))
    ok = np.isfinite(change)
    median = np.zeros(panel.shape[1])
    for col in np.flatnonzero(ok.sum(axis=0) >= MIN_COUNT):
        median[col] = np.median(change[ok[:, col], col])
    return np.cumsum(median)


def _market_parts(index: np.ndarray, dists: list[np.ndarray], k: int) -> list[np.ndarray]:
    """Per cell: the market's move from each neighbour to the cell, and its bend.

    The bend is the index's departure from the straight line between the nearest
    neighbours: what linear interpolation misses.
    """
    n, t = dists[0].shape
    col = np.broadcast_to(np.arange(t)[None, :], (n, t))
    at = index[col]
    moves = []
    cols = []
    for r, d in enumerate(dists):
        sign = -1 if r < k else 1
        nb = col + sign * np.nan_to_num(d, nan=0).astype(int)
        move = np.where(np.isfinite(d), at - index[np.clip(nb, 0, t - 1)], np.nan)
        moves.append(move)
        cols.append(np.where(np.isfinite(d), nb, -1))
    prev_d, next_d = dists[0], dists[k]
    with np.errstate(invalid="ignore", divide="ignore"):
        w = next_d / (prev_d + next_d)
        line = w * index[np.clip(cols[0], 0, t - 1)] + (1 - w) * index[np.clip(cols[k], 0, t - 1)]
        bend = np.where(np.isfinite(prev_d) & np.isfinite(next_d), at - line, np.nan)
    return [*moves, bend]


#: Observations on each side of a cell whose ``_surprise`` its noise features carry.
NOISE_NEIGHBOURS = 2


def _surprise(panel: np.ndarray, vals: list[np.ndarray], dists: list[np.ndarray]) -> np.ndarray:
    """Per observed cell: how far it sits off the line between its nearest neighbours.

    Its log value minus the log-linear interpolation of the nearest observations on each
    side (the cell itself left out); NaN on hidden cells and at the ends. ``vals`` /
    ``dists`` are the panel's ``_neighbours``, as many on each side.
    """
    k = len(vals) // 2
    prev, nxt = dists[0], dists[k]
    with np.errstate(invalid="ignore", divide="ignore"):
        line = (nxt * np.log(vals[0]) + prev * np.log(vals[k])) / (prev + nxt)
        return np.log(panel) - line


def _row_noise(panel: np.ndarray, surprise: np.ndarray) -> list[np.ndarray]:
    """Per row, ``[n]`` each: how noisy its observations are.

    The median absolute log change between consecutive observations (per square root of
    a month), the median absolute change of that change, and the median absolute
    ``surprise``; NaN where a row has too few observations.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        change, gap = changes_since_previous(np.log(panel))
        step = change / np.sqrt(gap)  # NaN where there is no previous observation
    bend, _ = changes_since_previous(step)  # each step against the row's previous one
    return [row_nanmedian(np.abs(a)) for a in (step, bend, surprise)]


def _noise_parts(
    panel: np.ndarray, vals: list[np.ndarray], dists: list[np.ndarray]
) -> list[np.ndarray]:
    """``[n, t]`` each: the row's noise, and the surprise of the cell's nearest neighbours.

    The row's ``_row_noise`` and the ``_surprise`` of the cell's ``NOISE_NEIGHBOURS``
    previous and next observations: a neighbour off its own line is likelier an outlier to
    discount than the start of a move to follow. ``vals`` / ``dists``: the panel's
    ``_neighbours``, at least ``NOISE_NEIGHBOURS`` on each side.
    """
    n, t = panel.shape
    k = len(dists) // 2
    surprise = _surprise(panel, vals, dists)
    parts = [np.broadcast_to(r[:, None], (n, t)) for r in _row_noise(panel, surprise)]
    col = np.arange(t)[None, :]
    for sign, first in ((-1, 0), (1, k)):
        for d in dists[first : first + NOISE_NEIGHBOURS]:
            rows, cols = np.nonzero(np.isfinite(d))
            near = np.full((n, t), np.nan)
            at = (col + sign * np.nan_to_num(d, nan=0).astype(int))[rows, cols]
            near[rows, cols] = surprise[rows, at]
            parts.append(near)
    return parts


def _cell_features(
    panel: np.ndarray, market: bool = False, neighbours: int = 2, noise: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """``(features [n*t, F], base [n*t])`` where base is the linear interpolation."""
    n, t = panel.shape
    base = interpolate_linear(panel)
    # One search serves both: the noise features read NOISE_NEIGHBOURS on each side.
    k = max(neighbours, NOISE_NEIGHBOURS) if noise else neighbours
    found_vals, found_dists = _neighbours(panel, k)
    vals = found_vals[:neighbours] + found_vals[k : k + neighbours]
    dists = found_dists[:neighbours] + found_dists[k : k + neighbours]
    observed = np.isfinite(panel)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = [np.log(v / base) for v in vals]
    # rows with no observation left (a training round may hide them all) have no median
    row_med = np.full(n, np.nan)
    some = observed.any(axis=1)
    row_med[some] = np.nanmedian(panel[some], axis=1)
    col = np.broadcast_to(np.arange(t)[None, :], (n, t)).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        parts = [
            *rel,
            *dists,
            np.log(base / row_med[:, None]),
            col,
            np.broadcast_to(observed.sum(axis=1)[:, None], (n, t)).astype(float),
            np.log(base),
        ]
    if market:
        parts += _market_parts(market_index(panel), dists, len(dists) // 2)
    if noise:
        parts += _noise_parts(panel, found_vals, found_dists)
    feats = np.stack([p.reshape(-1) for p in parts], axis=1)
    return feats, base.reshape(-1)


def hidden_folds(observed: np.ndarray, folds: int, seed: int, passes: int = 1) -> list[np.ndarray]:
    """``folds * passes`` masks: each pass's ``folds`` hide every observed cell exactly once.

    Each pass draws its own folds, so a cell is learnt with different cells hidden around it.
    """
    rng = np.random.default_rng(seed)
    masks = []
    for _ in range(passes):
        fold = rng.integers(0, folds, observed.shape)
        masks += [observed & (fold == r) for r in range(folds)]
    return masks


class LightGBMImputer(Imputer):
    """Linear interpolation corrected by a LightGBM model of the neighbourhood."""

    alias = "lgbm_impute"

    def __init__(
        self,
        seed: int = 0,
        # Every observed cell is hidden exactly once, in one of ``folds`` rounds (12.5% of
        # the cells each: the val split hides about 12%, mostly one cell per series);
        # random hiding made the score hang on the draw, and more passes did not help three
        # members (runs: docs/experiments.md, "the LightGBM imputer").
        folds: int = 8,
        passes: int = 1,
        n_estimators: int = 1000,
        market: bool = False,
        # three observations on each side and 70% of the features per tree: better on val
        # than two and 90% (docs/experiments.md)
        neighbours: int = 3,
        # The mean log correction of three models (seeds seed..seed+2, each its own folds
        # and feature subsets): steadier and better than one, five no better
        # (docs/experiments.md).
        members: int = 3,
        # Features of how noisy the row is and of how far each of the two nearest
        # neighbours on either side sits off its own line (``_noise_parts``), so a spike is
        # told from a move; chosen on the training file's selection splits
        # (docs/experiments.md).
        noise: bool = True,
    ) -> None:
        super().__init__(seed)
        self.members = members
        self.market = market
        self.noise = noise
        #: observations used on each side of a cell
        self.neighbours = neighbours
        self.folds = folds
        self.passes = passes
        self.n_estimators = n_estimators
        self.params: dict[str, float | int | str | bool] = {
            "objective": "l1",
            "learning_rate": 0.05,
            "num_leaves": 63,
            # better than 50 for one model (docs/experiments.md)
            "min_data_in_leaf": 100,
            "feature_fraction": 0.7,
            "seed": seed,
            "deterministic": True,
            "force_row_wise": True,
            "num_threads": 2,
            "verbose": -1,
        }
        self.boosters: list[lgb.Booster] = []

    def fit(self, panel: np.ndarray) -> Self:
        panel = check_panel(panel)
        self.boosters = [self._fit_one(panel, self.seed + m) for m in range(self.members)]
        return self

    def _fit_one(self, panel: np.ndarray, seed: int) -> lgb.Booster:
        """One model; each round hides one fold of the observed cells and learns them."""
        xs, ys = [], []
        for hide in hidden_folds(np.isfinite(panel), self.folds, seed, self.passes):
            masked = panel.copy()
            masked[hide] = np.nan
            feats, base = _cell_features(masked, self.market, self.neighbours, self.noise)
            flat = hide.reshape(-1) & np.isfinite(base)
            xs.append(feats[flat])
            ys.append(np.log(panel.reshape(-1)[flat] / base[flat]))
        data = lgb.Dataset(np.concatenate(xs), np.concatenate(ys))
        return lgb.train({**self.params, "seed": seed}, data, self.n_estimators)

    def _impute(self, panel: np.ndarray) -> np.ndarray:
        if not self.boosters:
            return interpolate_linear(panel)
        feats, base = _cell_features(panel, self.market, self.neighbours, self.noise)
        out = base.copy()
        todo = ~np.isfinite(panel.reshape(-1)) & np.isfinite(base)
        if todo.any():
            # The mean in log space: a geometric mean of the members' fills.
            logs = [b.predict(feats[todo], num_threads=2) for b in self.boosters]
            out[todo] = base[todo] * np.exp(np.mean(logs, axis=0))
        return out.reshape(panel.shape)
