"""The units-sold count model (issue 30): features, fit, intervals, data-only round trip."""

from __future__ import annotations

import numpy as np
import pytest

from foretab.forecast import units as units_module
from foretab.forecast.units import UnitsModel, features, last_year_mean


def _panel(seed: int = 0) -> np.ndarray:
    """200 projects over 36 months: Poisson sales decaying from a launch level; gaps."""
    rng = np.random.default_rng(seed)
    level = rng.uniform(5, 80, 200)[:, None]
    decay = np.exp(-0.04 * np.arange(36))[None, :]
    sold = rng.poisson(level * decay).astype(float)
    sold[rng.uniform(size=sold.shape) < 0.1] = np.nan  # months without a row
    return sold


def test_features_read_the_last_twelve_months() -> None:
    units = np.array([[np.nan] * 10 + [1.0, 2.0, np.nan, 4.0]])
    x = features(units, origin=13, horizon=2, first_month=1)
    got = dict(zip(units_module.FEATURES, x[0], strict=True))
    assert (got["last"], got["last_1"], got["last_2"]) == (4.0, 0.0, 2.0)
    assert got["mean_3"] == pytest.approx(2.0) and got["mean_12"] == pytest.approx(7 / 12)
    assert got["rows_12"] == 3 and got["since_row"] == 0
    assert got["target_month"] == 4  # column 13 is February of year 2; +2 → April


def test_the_baseline_is_last_years_mean_over_rows() -> None:
    units = np.array([[np.nan] * 12 + [3.0, np.nan] + [5.0] * 10, [np.nan] * 24])
    base = last_year_mean(units, 3)
    assert base[0].tolist() == pytest.approx([53 / 11] * 3)
    assert np.isnan(base[1]).all()


@pytest.mark.slow  # three LightGBM fits: about 2 s
def test_a_fitted_model_learns_the_decay_and_round_trips_as_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(units_module, "ROUNDS", 60)
    panel = _panel()
    history, future = panel[:, :24], panel[:, 24:]
    model = UnitsModel.fit(history, first_month=1)
    forecast = model.predict(history, 12)
    assert forecast.value.shape == (200, 12) and (forecast.value >= 0).all()
    assert (forecast.lo <= forecast.value).all() and (forecast.value <= forecast.hi).all()
    seen = np.isfinite(future)
    model_mae = np.abs(forecast.value - future)[seen].mean()
    base_mae = np.abs(last_year_mean(history, 12) - future)[seen].mean()
    assert model_mae < base_mae  # last year's mean misses the decay
    again = UnitsModel.from_texts(model.to_texts(), first_month=1)
    assert np.array_equal(again.predict(history, 12).value, forecast.value)
    assert all(text.startswith("tree") for text in model.to_texts())
