"""The neural forecasters' own parts: the calendar input and the range a forecast may take."""

from __future__ import annotations

import numpy as np
import pytest

from foretab.forecast.neural import (
    NHITSForecaster,
    PatchTSTForecaster,
    TiDEForecaster,
    _plausible_range,
    neural_installed,
)

pytestmark = [
    pytest.mark.neural,
    pytest.mark.skipif(not neural_installed(), reason="torch / neuralforecast not installed"),
]


def test_the_calendar_is_one_hot_and_a_later_end_reads_as_the_last_training_end() -> None:
    model = TiDEForecaster(0)
    model.calendar_size = 5
    got = model._calendar(np.array([0, 3, 4, 9]))
    assert got.shape == (4, 5)
    assert got.sum(axis=1).tolist() == [1, 1, 1, 1]
    assert got.argmax(axis=1).tolist() == [0, 3, 4, 4]


def test_models_that_do_not_read_the_calendar_get_no_calendar() -> None:
    model = NHITSForecaster(0)
    model.calendar_size = 5
    assert not model._calendar(np.array([0, 3])).any()


def test_the_plausible_range_leaves_a_thousandth_out_at_each_end() -> None:
    ratios = np.linspace(-1.0, 1.0, 100_001)
    low, high = _plausible_range(ratios)
    assert low == pytest.approx(-0.998, abs=1e-6)
    assert high == pytest.approx(0.998, abs=1e-6)
    assert _plausible_range(np.array([])) == (-np.inf, np.inf)


def _step_panel(rng: np.random.Generator, n: int, t: int) -> np.ndarray:
    """Flat noisy prices that all jump 30% at column 26, a fifth of the cells missing."""
    panel = rng.uniform(10_000, 50_000, (n, 1)) * np.exp(rng.normal(0, 0.01, (n, t)))
    panel[:, 26:] *= 1.3
    panel[rng.random((n, t)) < 0.2] = np.nan
    return panel


@pytest.mark.slow
def test_a_forecast_never_leaves_the_training_targets_range() -> None:
    rng = np.random.default_rng(0)
    model = PatchTSTForecaster(0)
    model.max_steps = 3
    model.fit(_step_panel(rng, 60, 30))
    low, high = model.log_ratio_range
    assert -0.5 < low < 0 < high < 0.5  # the jump is log 1.3 = 0.26
    history = rng.uniform(10_000, 50_000, (5, 1)) * np.ones((5, 24))
    history[:, -1] /= 5  # a last observation far off its series: inputs unlike training
    ratio = np.log(model.predict(history, 12) / history[:, -1:])
    assert (ratio >= low - 1e-9).all() and (ratio <= high + 1e-9).all()


@pytest.mark.slow
def test_tide_learns_a_move_shared_by_windows_that_end_at_the_same_column() -> None:
    import torch

    model = TiDEForecaster(0)
    model.max_steps = 400
    model.fit(_step_panel(np.random.default_rng(0), 200, 30))
    # The same flat, fully observed window, said to end at column 20 and at column 24:
    # only the calendar tells them apart (a padded window would tell its end too).
    rel, mask = torch.zeros(2, 24), torch.ones(2, 24)
    calendar = torch.from_numpy(model._calendar(np.array([20, 24])))
    with torch.no_grad():
        ends_20, ends_24 = model._forward(rel, mask, calendar).numpy()
    jump = np.log(1.3)
    # The shared jump at column 26: the sixth month after column 20, the second after 24.
    # The panel's last column is 29, so only horizons up to there were ever a target.
    assert (np.abs(ends_20[:5]) < jump / 2).all() and (ends_20[5:8] > jump * 0.7).all()
    assert abs(ends_24[0]) < jump / 2 and (ends_24[1:5] > jump * 0.7).all()
