"""The window features computed in whole blocks equal their column-by-column definition."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from foretab.forecast.base import last_observed
from foretab.forecast.features import changes_since_previous, row_nanmedian, window_features


def _nan_stat(fn: object, arr: np.ndarray) -> np.ndarray:
    out = np.full(arr.shape[0], np.nan)
    ok = np.isfinite(arr).any(axis=1)
    if ok.any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            out[ok] = fn(arr[ok], axis=1)  # type: ignore[operator]
    return out


def _reference(history: np.ndarray) -> np.ndarray:
    """The features one column at a time, with numpy's own NaN statistics."""
    n, length = history.shape
    level, age = last_observed(history)
    observed = np.isfinite(history)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.log(history / level[:, None])
    cols = [rel[:, length - 1 - lag] for lag in range(length)]
    cols += [np.log(level), age.astype(float), observed.sum(axis=1).astype(float)]
    for span in (3, 6, 12):
        cols.append(observed[:, -span:].sum(axis=1).astype(float))
        cols.append(_nan_stat(np.nanmean, rel[:, -span:]))
        cols.append(row_nanmedian(rel[:, -span:]))  # one slice at a time
    for fn in (np.nanmean, np.nanstd, np.nanmin, np.nanmax):
        cols.append(_nan_stat(fn, rel))
    ranked = np.sort(np.where(observed, np.arange(length)[None, :], -1), axis=1)[:, ::-1]
    for k in range(1, 6):
        idx = ranked[:, k]
        has = idx >= 0
        vals, gap = np.full(n, np.nan), np.full(n, np.nan)
        vals[has] = rel[has, idx[has]]
        gap[has] = (length - 1 - idx[has]).astype(float)
        cols += [vals, gap]
    return np.column_stack(cols)


def _panel(rng: np.random.Generator, n: int, t: int) -> np.ndarray:
    panel = np.exp(rng.normal(10, rng.choice([0.01, 0.3, 2.0]), (n, t)))
    panel[rng.random((n, t)) < rng.random()] = np.nan
    panel[rng.random((n, t)) < 0.03] = np.inf
    panel[0, : rng.integers(0, t + 1)] = np.nan
    return panel


@pytest.mark.parametrize("seed", range(5))
def test_window_features_equal_their_definition_bit_for_bit(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for n, t in ((1, 24), (2, 24), (3, 7), (40, 24), (5, 12), (2, 30)):
        history = _panel(rng, n, t)
        features, _, names = window_features(history)
        expected = _reference(history)
        assert len(names) == features.shape[1] == expected.shape[1] + 2  # + the two slopes
        assert np.array_equal(features[:, :-2], expected, equal_nan=True)


def test_changes_since_previous_equal_a_walk_over_the_months() -> None:
    rng = np.random.default_rng(7)
    logp = np.log(_panel(rng, 30, 24))
    change, gap = changes_since_previous(logp)
    for row in range(logp.shape[0]):
        last = None
        for col in range(logp.shape[1]):
            if not np.isfinite(logp[row, col]):
                assert np.isnan(change[row, col]) and gap[row, col] == 0
                continue
            if last is None:
                assert np.isnan(change[row, col]) and gap[row, col] == 0
            else:
                assert change[row, col] == logp[row, col] - logp[row, last]
                assert gap[row, col] == col - last
            last = col
