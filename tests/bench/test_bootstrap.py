"""Series-bootstrap intervals of the forecasting benchmarks' MAE and MRE."""

from __future__ import annotations

import numpy as np

from foretab.bench.bootstrap import series_error_intervals
from foretab.forecast.metrics import score


def test_intervals_surround_the_scores_and_resample_whole_series() -> None:
    rng = np.random.default_rng(0)
    truth = rng.uniform(10_000, 30_000, size=(400, 12))
    truth[rng.random(truth.shape) < 0.3] = np.nan  # unobserved months are not scored
    pred = truth * np.exp(rng.normal(0, 0.1, size=truth.shape))
    scores = score(pred, truth)
    (mae_lo, mae_hi), (mre_lo, mre_hi) = series_error_intervals(pred, truth)
    assert mae_lo < scores.mae < mae_hi and mre_lo < scores.mre < mre_hi
    # Independent errors of 400 series: the MRE's standard error is small but not nil.
    assert 0.001 < mre_hi - mre_lo < 0.01


def test_a_series_wide_error_widens_the_interval_as_the_cells_do_not_show() -> None:
    rng = np.random.default_rng(1)
    truth = np.full((300, 12), 20_000.0)
    # Each series is off by its own constant: its 12 cells are one draw, not twelve.
    shared = np.exp(rng.normal(0, 0.1, size=(300, 1))) * np.ones((1, 12))
    own = np.exp(rng.normal(0, 0.1, size=(300, 12)))
    (_, (lo_shared, hi_shared)) = series_error_intervals(truth * shared, truth)
    (_, (lo_own, hi_own)) = series_error_intervals(truth * own, truth)
    assert hi_shared - lo_shared > 2 * (hi_own - lo_own)


def test_missing_forecasts_count_and_masks_select_the_cells() -> None:
    truth = np.array([[100.0, 200.0], [300.0, 400.0], [500.0, 600.0]])
    pred = np.array([[110.0, np.nan], [300.0, 400.0], [500.0, 600.0]])
    mask = np.array([[1, 1], [1, 0], [0, 0]])
    # Series 3 has no scored cell; series 1's missing forecast is an error of 200.
    (mae_lo, mae_hi), _ = series_error_intervals(pred, truth, mask)
    assert mae_lo <= score(pred, truth, mask).mae <= mae_hi
    assert mae_lo >= 0.0 and mae_hi <= 105.0  # at most series 1's mean error (210 / 2)
    assert series_error_intervals(pred[:1], truth[:1]) is None  # one series: no interval
