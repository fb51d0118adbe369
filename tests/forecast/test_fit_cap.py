"""The fit's series cap (issue 27): off at the real corpus's size, bounding rows past it."""

from __future__ import annotations

import numpy as np
import pytest

from foretab.core.months import Month
from foretab.demo.scale import REAL_PROJECTS
from foretab.forecast import calibrate, gbm, units_store, windows
from foretab.forecast.gbm import LightGBMForecaster
from foretab.forecast.market import place_keys
from foretab.forecast.registry import get_forecaster
from foretab.forecast.units_store import fit_units_store_model
from foretab.forecast.windows import MAX_FIT_SERIES, sample_series
from tests.forecast.synthetic import make_panel
from tests.forecast.test_units_store import _frame

_CUT, _ROWS = gbm.cut_windows, gbm._rows


def test_the_cap_is_past_the_real_corpus() -> None:
    # Every series of the real corpus (and the 1x scale corpus) trains: nothing changes.
    assert MAX_FIT_SERIES > REAL_PROJECTS
    assert sample_series(REAL_PROJECTS, MAX_FIT_SERIES, 0) is None


def test_sample_series_below_at_and_past_the_cap() -> None:
    assert sample_series(50, None, 0) is None
    assert sample_series(50, 50, 0) is None
    picked = sample_series(50, 20, 7)
    assert picked is not None
    assert len(picked) == 20 and len(set(picked.tolist())) == 20
    assert np.all(np.diff(picked) > 0) and picked.max() < 50
    assert np.array_equal(picked, sample_series(50, 20, 7))  # seeded


def _fit_recording(
    monkeypatch: pytest.MonkeyPatch, cap: int | None, n: int = 60
) -> tuple[LightGBMForecaster, list[int], list[int]]:
    """Fit ``lgbm_market`` with trees stubbed out; the series windows were cut from."""
    cut_rows: list[int] = []
    feature_rows: list[int] = []

    def cut(panel: np.ndarray, *args: object, **kwargs: object) -> windows.Windows:
        cut_rows.append(panel.shape[0])
        return _CUT(panel, *args, **kwargs)  # type: ignore[arg-type]

    def rows(*args: object, **kwargs: object) -> tuple[np.ndarray, ...]:
        out = _ROWS(*args, **kwargs)  # type: ignore[arg-type]
        feature_rows.append(len(out[1]))
        return out

    monkeypatch.setattr(gbm, "cut_windows", cut)
    monkeypatch.setattr(gbm, "_rows", rows)
    monkeypatch.setattr(gbm, "_trained", lambda *args: None)  # no trees: rows only
    model = get_forecaster("lgbm_market", 0)
    assert isinstance(model, LightGBMForecaster)
    model.in_sample_residuals = False
    model.max_series = cap
    places = [place_keys(f"C{i % 3}", f"D{i % 12}") for i in range(n)]
    model.fit(make_panel(n=n, t=30, seed=1), places=places)
    return model, cut_rows, feature_rows


def test_price_fit_is_unchanged_at_or_below_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    _, uncapped, rows_all = _fit_recording(monkeypatch, None)
    _, at_cap, rows_at = _fit_recording(monkeypatch, 60)
    assert uncapped == at_cap == [60]
    assert rows_all == rows_at


def test_price_fit_past_the_cap_samples_series(monkeypatch: pytest.MonkeyPatch) -> None:
    _, _, rows_all = _fit_recording(monkeypatch, None)
    model, capped, rows_capped = _fit_recording(monkeypatch, 15)
    assert capped == [15]  # windows are cut from the sample only
    assert 0 < rows_capped[0] < rows_all[0] / 2
    # the market signals still come from every series: all 12 districts and 3 cities
    assert model.market is not None and len(model.market.keys) == 1 + 12 + 3


def test_backtest_scores_at_most_the_cap() -> None:
    panel = make_panel(n=80, t=36, seed=2, missing=0.1)
    full = calibrate.run_backtest(panel, lambda: get_forecaster("naive"), 24, 6)
    capped = calibrate.run_backtest(panel, lambda: get_forecaster("naive"), 24, 6, None, 25, 0)
    same = calibrate.run_backtest(panel, lambda: get_forecaster("naive"), 24, 6, None, 80, 0)
    assert all(w.shape[0] <= 25 for w in capped.windows)
    assert sum(len(w) for w in capped.windows) < sum(len(w) for w in full.windows)
    for a, b in zip(full.errors, same.errors, strict=True):
        np.testing.assert_array_equal(a, b)


def test_units_fit_samples_series_past_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []

    def fit(values: np.ndarray, *args: object, **kwargs: object) -> object:
        seen.append(values.shape[0])
        return object()

    monkeypatch.setattr(units_store.UnitsModel, "fit", fit)
    frame = _frame().rename(columns={"units_sold": "price"})
    fit_units_store_model(frame, Month(2021, 12))  # 10 projects, below the cap
    monkeypatch.setattr(units_store, "MAX_FIT_SERIES", 4)
    fitted = fit_units_store_model(frame, Month(2021, 12))
    assert seen == [10, 4]
    assert fitted.n_series == 10  # the series it was drawn from
