"""The LightGBM and imputer options measured in docs/benchmarks/ (row share, level weights,
the imputer's market index)."""

from __future__ import annotations

import numpy as np

from foretab.forecast.gbm import LightGBMForecaster
from foretab.forecast.impute import LightGBMImputer, market_index

from .synthetic import make_panel


def _small(**kw: object) -> LightGBMForecaster:
    return LightGBMForecaster(0, num_leaves=7, fixed_rounds=25, **kw)  # type: ignore[arg-type]


def test_the_store_path_fits_on_the_fixed_row_share_only() -> None:
    panel = make_panel(60, 30, seed=1)
    history = make_panel(10, 24, seed=2)
    full = _small().fit(panel)
    half = _small(fixed_row_fraction=0.5).fit(panel)
    assert 0.4 * full.n_rows < half.n_rows < 0.6 * full.n_rows
    pred = half.predict(history, 12)
    assert np.isfinite(pred).all() and not np.allclose(pred, full.predict(history, 12))


def test_level_weights_change_the_fit_and_keep_the_contract() -> None:
    panel = make_panel(60, 30, seed=1)
    history = make_panel(10, 24, seed=2)
    plain = _small().fit(panel).predict(history, 12)
    weighted = _small(level_weight=1.0).fit(panel).predict(history, 12)
    assert np.isfinite(weighted).all() and (weighted > 0).all()
    assert not np.allclose(plain, weighted)


def _v_shaped_market(n: int = 300, t: int = 24, seed: int = 0) -> np.ndarray:
    """Every series follows one market path that falls 2%/month, then rises 2%/month."""
    rng = np.random.default_rng(seed)
    path = np.concatenate([-0.02 * np.arange(12), -0.22 + 0.02 * np.arange(1, t - 11)])
    scale = rng.uniform(10_000, 60_000, n)[:, None]
    panel = scale * np.exp(path[None, :] + rng.normal(0, 0.005, (n, t)))
    panel[rng.random((n, t)) < 0.4] = np.nan
    return panel


def test_the_market_index_recovers_the_common_path() -> None:
    index = market_index(_v_shaped_market())
    steps = np.diff(index)
    np.testing.assert_allclose(steps[:11], -0.02, atol=0.004)
    np.testing.assert_allclose(steps[12:], 0.02, atol=0.004)


def test_the_market_index_fills_a_gap_at_the_bottom_of_a_dip_better() -> None:
    train = _v_shaped_market(seed=1)
    test = _v_shaped_market(seed=2)
    truth = test.copy()
    # Hide the months around the bottom in half the series: a straight line cuts the
    # corner; the other half still shows the market there.
    hide = np.zeros(test.shape, dtype=bool)
    hide[::2, 10:13] = np.isfinite(test[::2, 10:13])
    test[hide] = np.nan
    errors = {}
    for market in (False, True):
        imputer = LightGBMImputer(0, n_estimators=60, market=market, members=1).fit(train)
        filled = imputer.impute(test)
        errors[market] = np.mean(np.abs(filled[hide] / truth[hide] - 1))
    assert errors[True] < 0.8 * errors[False]


def test_the_store_skips_in_sample_residuals_only_when_a_backtest_replaces_them(
    tiny_lgbm: None,
) -> None:
    from foretab.core.months import Month, month_range
    from foretab.core.plan import EntityRef
    from foretab.forecast.store import StoreModel, StorePanel, fit_store_model

    ref = Month(2021, 12)

    def fitted(months: int) -> StoreModel:
        values = make_panel(60, months, seed=3)
        entities = tuple(EntityRef("Nanjing", f"D{i % 3}", f"P{i}") for i in range(60))
        panel = StorePanel(entities, tuple(month_range(ref - (months - 1), ref)), values)
        return fit_store_model(panel, ref, "lgbm", seed=0)

    long = fitted(30)
    assert long.interval_method == "backtest-per-series"
    assert long.forecaster.in_sample_residuals is False
    # Too short for a backtest: the in-sample residuals are the intervals, so measured.
    short = fitted(14)
    assert short.interval_method == "in-sample"
    grid = short.forecaster.residual_quantiles
    assert (grid[:, -1] > grid[:, 0]).all()


def test_the_calendar_free_member_ignores_the_calendar_and_is_blended_in() -> None:
    from foretab.forecast.gbm import calendar_column

    panel = make_panel(60, 30, seed=1)
    history = make_panel(10, 30, seed=2)
    plain = _small().fit(panel)
    blended = _small(calendar_free_weight=0.5).fit(panel)
    assert len(blended.boosters) == 1 and len(blended.free_boosters) == 1
    col = calendar_column(blended.lookback)
    # The members are fitted on one matrix: the blanked column is put back afterwards.
    assert blended.boosters[0].feature_importance()[col] > 0
    assert blended.free_boosters[0].feature_importance()[col] == 0
    # Same rows, same seed: the calendar member is the plain model, and the blend is the
    # weighted mean of the two members' log ratios.
    main = plain.predict(history, 12)
    blended_pred = blended.predict(history, 12)
    blended.calendar_free_weight = 1.0
    blended._last = None  # the one-entry memo keys on the history, not the weight
    free = blended.predict(history, 12)
    np.testing.assert_allclose(blended_pred, np.sqrt(main * free), rtol=1e-9)
    assert not np.allclose(blended_pred, main) and not np.allclose(free, main)


def test_no_calendar_means_no_calendar_free_member() -> None:
    model = _small(calendar=False, calendar_free_weight=0.5).fit(make_panel(60, 30, seed=1))
    assert model.calendar_free_weight == 0.0 and model.free_boosters == []


def test_the_calendar_free_member_round_trips_through_the_model_file() -> None:
    from foretab.core.months import Month
    from foretab.forecast.store import StoreModel

    panel = make_panel(60, 30, seed=1)
    history = make_panel(10, 24, seed=2)
    model = _small(calendar_free_weight=0.3).fit(panel)
    fitted = StoreModel("lgbm", Month(2021, 12), 24, 0.0, model, first_month=Month(2021, 12) - 29)
    loaded = StoreModel.from_bytes(fitted.to_bytes())
    assert loaded.forecaster.calendar_free_weight == 0.3  # type: ignore[attr-defined]
    assert len(loaded.forecaster.free_boosters) == 1  # type: ignore[attr-defined]
    np.testing.assert_array_equal(loaded.predict(history, 12), fitted.predict(history, 12))
