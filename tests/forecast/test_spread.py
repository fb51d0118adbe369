"""Per-series intervals: residuals normalised by each series' own noise (spread.py)."""

from __future__ import annotations

import numpy as np
import pytest

from foretab.forecast.baselines import NaiveForecaster
from foretab.forecast.calibrate import (
    GRID,
    WIDENING,
    calibrate,
    calibrate_adaptive,
    run_backtest,
)
from foretab.forecast.spread import MAX_STALE, Spread, fit_spread, own_volatility, staleness


def _walks(n: int, t: int, sigmas: tuple[float, ...], seed: int) -> np.ndarray:
    """``n`` random walks per sigma, stacked in sigma order, with a fifth of months missing."""
    rng = np.random.default_rng(seed)
    blocks = [np.exp(np.cumsum(rng.normal(0.0, s, (n, t)), axis=1)) * 10_000 for s in sigmas]
    panel = np.concatenate(blocks)
    panel[rng.random(panel.shape) < 0.2] = np.nan
    panel[:, -1] = np.where(np.isnan(panel[:, -1]), panel[:, -2], panel[:, -1])
    return panel


def _coverage_by_group(
    quantiles: np.ndarray, scale: np.ndarray, fresh: np.ndarray, n: int
) -> list[float]:
    """80% coverage per sigma group of naive forecasts from column 23 over the next 12."""
    last = fresh[:, 23]
    ok = np.isfinite(last)
    lo_q = np.array([np.interp(0.1, GRID, q) for q in quantiles])
    hi_q = np.array([np.interp(0.9, GRID, q) for q in quantiles])
    lo = last[:, None] * np.exp(lo_q[None, :] * scale[:, None])
    hi = last[:, None] * np.exp(hi_q[None, :] * scale[:, None])
    truth = fresh[:, 24:36]
    inside = (lo <= truth) & (truth <= hi)
    seen = np.isfinite(truth) & ok[:, None]
    return [float(inside[g * n : (g + 1) * n][seen[g * n : (g + 1) * n]].mean()) for g in (0, 1)]


def test_volatility_reads_gap_normalised_changes() -> None:
    row = np.log(np.array([[100.0, np.nan, 100.0 * np.exp(0.2), 100.0 * np.exp(0.1)]]))
    vol = own_volatility(np.exp(row))
    # changes: +0.2 over two months (0.2 / sqrt 2), then -0.1 over one
    expected = np.sqrt(((0.2 / np.sqrt(2)) ** 2 + 0.1**2) / 2)
    np.testing.assert_allclose(vol, [expected])
    assert np.isnan(own_volatility(np.array([[100.0, np.nan, np.nan]])))[0]


def test_a_calm_and_a_noisy_group_each_get_their_own_coverage() -> None:
    n, sigmas = 800, (0.01, 0.08)
    backtest = run_backtest(_walks(n, 36, sigmas, seed=1), NaiveForecaster, 24)
    fresh = _walks(n, 36, sigmas, seed=2)
    window = fresh[:, :24]
    pooled = calibrate(backtest.residuals)
    calm, noisy = _coverage_by_group(pooled.residual_quantiles, np.ones(2 * n), fresh, n)
    # One width for both: the calm walks are nearly always inside, the noisy ones often not.
    assert calm > 0.95 and noisy < 0.7
    pooled_gap = calm - noisy
    adaptive = calibrate_adaptive(backtest)
    assert adaptive.spread is not None
    scale = adaptive.spread.scale(window)
    assert np.median(scale[n:]) > 4 * np.median(scale[:n])
    unwidened = adaptive.residual_quantiles / WIDENING
    calm, noisy = _coverage_by_group(unwidened, scale, fresh, n)
    # Each group near the stated 80% (the shrinkage towards the typical volatility leaves
    # the calm group a little wide; the staleness term takes a little of the noisy
    # group's width), the gap between them less than half the pooled one.
    assert 0.70 <= calm <= 0.92 and 0.70 <= noisy <= 0.92
    assert abs(calm - noisy) < pooled_gap / 2


def test_fit_spread_without_a_relation_gives_every_series_one_scale() -> None:
    rng = np.random.default_rng(3)
    windows = [np.exp(np.cumsum(rng.normal(0, 0.05, (200, 24)), axis=1))]
    errors = [rng.normal(0, 0.1, (200, 12))]  # unrelated to the windows' volatility
    spread = fit_spread(windows, errors)
    scale = spread.scale(windows[0])
    assert np.ptp(scale) < 0.6  # nearly flat: the slope found is small or zero
    assert spread.base >= 0 and spread.slope >= 0


@pytest.mark.parametrize(
    "values", [[0.0, 0.1, 1.0], [0.05, -0.1, 1.0], [0.05, 0.1], [0.05, float("nan"), 1.0]]
)
def test_a_spread_refuses_impossible_numbers(values: list[float]) -> None:
    with pytest.raises(ValueError):
        Spread.from_list(values)


def test_a_spread_round_trips_through_its_list() -> None:
    spread = Spread(0.05, 0.02, 0.8)
    assert Spread.from_list(spread.as_list()) == spread
    calm = np.full((1, 24), 10_000.0)
    assert spread.scale(calm)[0] >= 0.25  # equal prices are still uncertain


def test_staleness_is_the_root_of_the_months_since_the_last_observation() -> None:
    rows = np.full((3, 24), np.nan)
    rows[0, -1] = 1.0  # observed at R
    rows[1, -5] = 1.0  # four months before
    rows[2, 0] = 1.0  # 23 months before: capped
    np.testing.assert_allclose(staleness(rows), [0.0, 2.0, np.sqrt(MAX_STALE)])


def test_fit_spread_finds_errors_that_grow_with_staleness() -> None:
    rng = np.random.default_rng(5)
    n = 600
    windows = np.exp(np.cumsum(rng.normal(0, 0.03, (n, 24)), axis=1))
    age = rng.integers(0, 9, n)
    for i, a in enumerate(age):
        windows[i, 24 - a :] = np.nan  # last observed `a` months before R
    errors = rng.normal(0, 1, (n, 12)) * (0.03 + 0.02 * np.sqrt(age))[:, None]
    spread = fit_spread([windows], [errors])
    assert spread.stale > 0.01
    scale = spread.scale(windows)
    assert np.median(scale[age >= 6]) > 1.5 * np.median(scale[age == 0])
    without = fit_spread([windows], [errors], stale=False)
    assert without.stale == 0.0 and np.ptp(without.scale(windows)) < np.ptp(scale)


def test_a_spread_from_before_the_staleness_term_reads_as_none() -> None:
    old = Spread.from_list([0.05, 0.02, 0.8])  # a model file's three numbers
    assert old.stale == 0.0 and old.as_list() == [0.05, 0.02, 0.8]
    new = Spread(0.05, 0.02, 0.8, 0.03)
    assert Spread.from_list(new.as_list()) == new and len(new.as_list()) == 4
    rows = np.full((2, 24), 10_000.0)
    rows[1, -6:] = np.nan
    # Observed at R: staleness 0, the same scale; six months stale: wider with the term.
    assert new.scale(rows)[0] == old.scale(rows)[0]
    assert new.scale(rows)[1] > old.scale(rows)[1]
    with pytest.raises(ValueError):
        Spread(0.05, 0.02, 0.8, -0.1)
