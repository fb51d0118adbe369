"""Upper and lower tails fitted apart (``calibrate.fit_tails``) and saved as data only."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest

from foretab.errors import ForecastError
from foretab.forecast.calibrate import (
    GRID,
    WIDENING,
    Backtest,
    Tails,
    calibrate_adaptive,
    fit_tails,
)
from foretab.forecast.gbm import LightGBMForecaster
from foretab.forecast.persist import MARKET_MEMBERS, TAIL_KEYS
from foretab.forecast.store import StoreModel

from .archives import zip_members, zip_of
from .test_market import REF, SMALL, _district_panel, _places

SIGMA = 0.05
ORIGINS = 12
ROWS = 3_000


def _backtest(late_lower: float, late_upper: float, seed: int = 0) -> Backtest:
    """Normal residuals at the earlier origins; at the later ones a split normal.

    Every row reads the same window, so every series has the same error scale: the
    later residuals are ``SIGMA × |N|`` times ``late_lower`` below 0 and ``late_upper``
    above, each side with probability ½ (median 0).
    """
    rng = np.random.default_rng(seed)
    window = np.tile(10_000 * np.exp(np.cumsum(np.resize([0.03, -0.02], 24))), (ROWS, 1))
    windows, errors = [], []
    for origin in range(ORIGINS):
        h = min(12, ORIGINS - origin)
        size = np.abs(rng.normal(0.0, SIGMA, (ROWS, h)))
        up = rng.random((ROWS, h)) < 0.5
        if origin < ORIGINS // 2:
            error = np.where(up, size, -size)
        else:
            error = np.where(up, size * late_upper, -size * late_lower)
        windows.append(window)
        errors.append(error)
    return Backtest(windows, errors)


def test_the_fit_recovers_a_known_asymmetric_tail() -> None:
    # The provisional grid is widened by WIDENING, so an unchanged tail gets 1 / WIDENING.
    tails = fit_tails(_backtest(late_lower=1.0, late_upper=0.5))
    assert tails is not None
    assert tails.lower == pytest.approx(1.0 / WIDENING, abs=0.02)
    assert tails.upper == pytest.approx(0.5 / WIDENING, abs=0.02)
    heavier = fit_tails(_backtest(late_lower=1.5, late_upper=1.0, seed=1))
    assert heavier is not None
    assert heavier.lower == pytest.approx(1.5 / WIDENING, abs=0.02)
    assert heavier.upper == pytest.approx(1.0 / WIDENING, abs=0.02)


def test_the_store_grid_is_the_untailed_one_with_each_half_scaled() -> None:
    backtest = _backtest(late_lower=1.0, late_upper=0.5, seed=2)
    plain = calibrate_adaptive(backtest, ORIGINS, centre=True)
    tailed = calibrate_adaptive(backtest, ORIGINS, centre=True, tails=True)
    assert plain.tails is None and tailed.tails is not None
    assert tailed.spread == plain.spread
    expected = np.where(
        plain.residual_quantiles > 0,
        plain.residual_quantiles * tailed.tails.upper,
        plain.residual_quantiles * tailed.tails.lower,
    )
    np.testing.assert_allclose(tailed.residual_quantiles, expected)
    median = int(np.argmin(np.abs(GRID - 0.5)))
    np.testing.assert_allclose(tailed.residual_quantiles[:, median], 0.0, atol=1e-12)
    assert np.all(np.diff(tailed.residual_quantiles, axis=1) >= 0)
    with pytest.raises(ValueError, match="centred"):
        calibrate_adaptive(backtest, ORIGINS, centre=False, tails=True)


def test_too_little_to_fit_leaves_the_grid_alone() -> None:
    one = _backtest(1.0, 0.5)
    assert fit_tails(Backtest(one.windows[:1], one.errors[:1])) is None  # no later origin
    few = Backtest([w[:5] for w in one.windows], [e[:5] for e in one.errors])
    assert fit_tails(few) is None  # under MIN_RESIDUALS later residuals
    assert calibrate_adaptive(few, ORIGINS, centre=True, tails=True).tails is None


@pytest.fixture(scope="module")
def model() -> StoreModel:
    values = _district_panel(n=20, t=24)
    market = LightGBMForecaster(0, market=True, **SMALL).fit(values, places=_places(20))
    return StoreModel("lgbm_market", REF, 24, 0.0, market, REF - 23, n_series=20)


def _tailed(model: StoreModel, tails: Tails) -> StoreModel:
    """``model``'s file read back with a centred grid whose halves ``tails`` scaled."""
    copy = StoreModel.from_bytes(model.to_bytes())
    forecaster = copy.forecaster
    assert isinstance(forecaster, LightGBMForecaster)
    grid = forecaster.residual_quantiles
    forecaster.residual_quantiles = tails.apply(grid - grid[:, 50:51])
    forecaster.tails = tails
    return copy


def _history(n: int = 20) -> np.ndarray:
    return _district_panel(n=n, t=24, seed=3)


def test_an_old_model_file_without_the_factors_answers_as_before(model: StoreModel) -> None:
    data = model.to_bytes()
    manifest = json.loads(zip_members(data)["manifest.json"])
    assert not set(TAIL_KEYS) & set(manifest["hyper_parameters"])  # what older code wrote
    loaded = StoreModel.from_bytes(data)
    assert loaded.forecaster.tails is None  # type: ignore[attr-defined]
    q = (0.05, 0.1, 0.5, 0.9, 0.95)
    refs = None
    np.testing.assert_array_equal(
        loaded.predict_quantiles(_history(), 12, q, refs),
        model.predict_quantiles(_history(), 12, q, refs),
    )


def test_the_factors_are_in_the_grid_and_the_keys_only_record_them(model: StoreModel) -> None:
    tailed = _tailed(model, Tails(0.9, 0.6))
    data = tailed.to_bytes()
    members = zip_members(data)
    manifest = json.loads(members["manifest.json"])
    hyper = manifest["hyper_parameters"]
    assert (hyper["tail_lower"], hyper["tail_upper"]) == (0.9, 0.6)
    loaded = StoreModel.from_bytes(data)
    assert loaded.forecaster.tails == Tails(0.9, 0.6)  # type: ignore[attr-defined]
    q = (0.1, 0.5, 0.9)
    expected = tailed.predict_quantiles(_history(), 12, q)
    np.testing.assert_array_equal(loaded.predict_quantiles(_history(), 12, q), expected)
    # Code that knows no tail keys ignores them and reads the same intervals.
    for key in TAIL_KEYS:
        del hyper[key]
    members["manifest.json"] = json.dumps(manifest).encode()
    unaware = StoreModel.from_bytes(zip_of(members))
    assert unaware.forecaster.tails is None  # type: ignore[attr-defined]
    np.testing.assert_array_equal(unaware.predict_quantiles(_history(), 12, q), expected)
    # The upper half moved in by 0.6, the lower by 0.9 (about the median).
    plain = _tailed(model, Tails(1.0, 1.0)).predict_quantiles(_history(), 12, q)
    lo, mid, hi = (np.log(expected[..., i] / plain[..., 1]) for i in range(3))
    plain_lo, plain_hi = (np.log(plain[..., i] / plain[..., 1]) for i in (0, 2))
    np.testing.assert_allclose(mid, 0.0, atol=1e-12)
    np.testing.assert_allclose(hi, 0.6 * plain_hi, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(lo, 0.9 * plain_lo, rtol=1e-9, atol=1e-12)


def test_the_file_with_factors_stays_data_only(model: StoreModel) -> None:
    data = _tailed(model, Tails(0.8, 0.7)).to_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = zf.namelist()
        manifest = json.loads(zf.read("manifest.json"))
    assert set(names) == {"manifest.json", "booster_0.txt", *MARKET_MEMBERS}
    assert all(type(manifest["hyper_parameters"][k]) is float for k in TAIL_KEYS)


@pytest.mark.parametrize(
    "factors",
    [
        {"tail_lower": 0.8},  # one without the other
        {"tail_lower": "0.8", "tail_upper": 0.7},  # not numbers
        {"tail_lower": True, "tail_upper": 0.7},
        {"tail_lower": 0.8, "tail_upper": 99.0},  # outside the range a fit looks in
    ],
)
def test_crafted_factors_are_refused(model: StoreModel, factors: dict[str, object]) -> None:
    members = zip_members(model.to_bytes())
    manifest = json.loads(members["manifest.json"])
    manifest["hyper_parameters"].update(factors)
    members["manifest.json"] = json.dumps(manifest).encode()
    with pytest.raises(ForecastError, match="model file is invalid"):
        StoreModel.from_bytes(zip_of(members))
