from __future__ import annotations

import numpy as np
import pytest

from foretab.forecast.base import check_panel, last_observed
from foretab.forecast.metrics import score
from foretab.forecast.windows import cut_windows


def test_score_uses_observed_cells_only() -> None:
    truth = np.array([[100.0, np.nan], [200.0, 50.0]])
    pred = np.array([[110.0, 1e9], [180.0, 50.0]])
    s = score(pred, truth)
    assert s.n_points == 3
    assert s.mae == pytest.approx(10.0)
    assert s.mse == pytest.approx((100 + 400) / 3)
    assert s.mre == pytest.approx((0.1 + 0.1 + 0) / 3)


def test_missing_prediction_counts_as_full_error() -> None:
    s = score(np.array([[np.nan]]), np.array([[100.0]]))
    assert s.mae == 100.0


def test_last_observed_and_check_panel() -> None:
    panel = check_panel(
        np.array([[1.0, np.nan, 3.0, np.nan], [np.nan] * 4, [0.0, 5.0, -1, np.nan]])
    )
    value, age = last_observed(panel)
    assert value[0] == 3.0 and age[0] == 1
    assert np.isnan(value[1]) and age[1] == 4
    assert value[2] == 5.0 and age[2] == 2  # zero and negative prices are "no data"


def test_windows_never_reach_past_the_panel() -> None:
    panel = np.arange(1.0, 21.0)[None, :].repeat(3, axis=0)
    win = cut_windows(panel, lookback=6, horizon=4)
    assert win.history.shape[1] == 6 and win.target.shape[1] == 4
    # Targets are exactly the months after each window's end, NaN beyond the panel.
    for hist, targ, end in zip(win.history, win.target, win.end, strict=True):
        assert hist[-1] == end + 1
        assert np.nanmax(targ) <= 20.0
        expected = np.arange(end + 2, end + 6, dtype=float)
        expected[expected > 20] = np.nan
        np.testing.assert_array_equal(targ, expected)
    assert win.end.max() == 18  # the last window has one target: column 19
