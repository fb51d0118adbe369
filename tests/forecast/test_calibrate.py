"""Backtest conformal intervals recover the known spread of a random walk."""

from __future__ import annotations

import numpy as np
import pytest

from foretab.forecast.baselines import NaiveForecaster
from foretab.forecast.calibrate import GRID, calibrate, run_backtest


def _random_walk(n: int, t: int, sigma: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    steps = rng.normal(0.0, sigma, (n, t))
    return 10_000 * np.exp(np.cumsum(steps, axis=1))


def test_naive_on_a_random_walk_gets_sqrt_h_quantiles() -> None:
    sigma = 0.02
    panel = _random_walk(2_000, 36, sigma, seed=1)
    cal = calibrate(run_backtest(panel, NaiveForecaster, lookback=24).residuals)
    q90 = cal.residual_quantiles[:, int(np.argmin(np.abs(GRID - 0.9)))]
    expected = 1.2816 * sigma * np.sqrt(np.arange(1, 13))
    np.testing.assert_allclose(q90, expected, rtol=0.12)
    assert cal.counts[0] > cal.counts[-1] > 0  # more origins reach the short horizons


def test_intervals_cover_fresh_data_at_the_stated_level() -> None:
    sigma = 0.02
    cal = calibrate(run_backtest(_random_walk(2_000, 36, sigma, 2), NaiveForecaster, 24).residuals)
    fresh = _random_walk(3_000, 36, sigma, 3)
    last = fresh[:, 23:24]
    truth = fresh[:, 24:36]
    lo = last * np.exp(np.array([np.interp(0.1, GRID, q) for q in cal.residual_quantiles]))
    hi = last * np.exp(np.array([np.interp(0.9, GRID, q) for q in cal.residual_quantiles]))
    coverage = ((lo <= truth) & (truth <= hi)).mean()
    assert 0.77 <= coverage <= 0.83


def test_interval_scores_count_observed_cells_only() -> None:
    from foretab.bench.forecast.corpus import interval_scores

    lo = np.array([[90.0, 90.0, 90.0, 90.0]])
    hi = np.array([[110.0, 110.0, 110.0, 130.0]])
    truth = np.array([[100.0, 120.0, np.nan, 85.0]])
    coverage, width = interval_scores(lo, hi, truth)
    assert coverage == 1 / 3
    assert width == (20 + 20 + 40) / 3


def test_a_short_panel_gets_fewer_origins_or_none() -> None:
    from foretab.forecast.calibrate import TooShort

    short = _random_walk(500, 18, 0.02, seed=4)  # 6 origins, horizons 7..12 borrow
    cal = calibrate(run_backtest(short, NaiveForecaster, 24).residuals, origins=6)
    assert cal.counts[5] > 0 and cal.counts[6] == 0
    assert np.all(np.diff(cal.residual_quantiles, axis=1) >= 0)
    with pytest.raises(TooShort):
        run_backtest(_random_walk(50, 14, 0.02, seed=5), NaiveForecaster, 24)


def test_coverage_by_volatility_splits_the_series_into_fifths() -> None:
    from foretab.bench.forecast.corpus import coverage_by_volatility

    rng = np.random.default_rng(6)
    sigma = np.repeat([0.005, 0.01, 0.02, 0.04, 0.08], 20)[:, None]
    window = 10_000 * np.exp(np.cumsum(rng.normal(0.0, 1.0, (100, 24)) * sigma, axis=1))
    truth = window[:, -1:] * np.exp(rng.normal(0.0, 1.0, (100, 12)) * sigma)
    # One fixed band of +-3%: it covers the calm series and misses the volatile ones.
    lo, hi = window[:, -1:] * 0.97 * np.ones((1, 12)), window[:, -1:] * 1.03 * np.ones((1, 12))
    fifths = coverage_by_volatility(lo, hi, truth, window)
    assert fifths is not None and len(fifths) == 5
    assert fifths[0] > 0.99 and fifths[-1] < 0.5
    assert list(fifths) == sorted(fifths, reverse=True)
    assert coverage_by_volatility(lo[:10], hi[:10], truth[:10], window[:10]) is None


def _drifting_walk(n: int, t: int, sigma: float, drift: np.ndarray, seed: int) -> np.ndarray:
    """A random walk whose per-month log drift is ``drift[t]`` (one value per month)."""
    rng = np.random.default_rng(seed)
    steps = rng.normal(0.0, sigma, (n, t)) + drift[None, :]
    return 10_000 * np.exp(np.cumsum(steps, axis=1))


def test_recent_drift_recovers_a_planted_fall_of_the_last_months() -> None:
    from foretab.forecast.calibrate import DRIFT_ORIGINS, recent_drift

    drift = np.zeros(36)
    drift[-DRIFT_ORIGINS - 6 :] = -0.004  # the market turned down; naive cannot know
    panel = _drifting_walk(3_000, 36, 0.02, drift, seed=6)
    found = recent_drift(run_backtest(panel, NaiveForecaster, 24, DRIFT_ORIGINS).residuals)
    assert found == pytest.approx(-0.004, abs=0.0008)
    flat = _random_walk(3_000, 36, 0.02, seed=7)
    assert (
        abs(recent_drift(run_backtest(flat, NaiveForecaster, 24, DRIFT_ORIGINS).residuals)) < 0.0008
    )


@pytest.mark.parametrize("adaptive", [False, True])
def test_the_location_follows_the_recent_drift_not_the_old_bias(adaptive: bool) -> None:
    """An old rise biases the long backtest's residuals; the location follows the last months."""
    from foretab.forecast.calibrate import conformal_quantiles

    drift = np.zeros(36)
    drift[:30] = 0.01  # rose 1%/month, then flat for the last six months
    panel = _drifting_walk(3_000, 36, 0.02, drift, seed=8)
    median = int(np.argmin(np.abs(GRID - 0.5)))
    plain = conformal_quantiles(panel, NaiveForecaster, 24, 18, adaptive=adaptive)
    q = plain.residual_quantiles[5]
    assert q[median] > 0.15 * (q[90] - q[10])  # split conformal keeps the old rise
    assert plain.drift == 0.0
    cal = conformal_quantiles(
        panel, NaiveForecaster, 24, 18, adaptive=adaptive, make_drift_copy=NaiveForecaster
    )
    assert abs(cal.drift) < 0.001
    np.testing.assert_allclose(cal.residual_quantiles[:, median], 0.0, atol=1e-12)
    spread = np.diff(cal.residual_quantiles[:, [10, 90]], axis=1)
    np.testing.assert_allclose(spread, np.diff(plain.residual_quantiles[:, [10, 90]], axis=1))


def test_an_absurd_drift_is_clipped() -> None:
    from foretab.forecast.calibrate import MAX_DRIFT, recent_drift

    wild = [np.full(500, 0.5 * (k + 1)) for k in range(6)]
    assert recent_drift(wild) == MAX_DRIFT
    assert recent_drift([np.empty(0)] * 6) == 0.0
