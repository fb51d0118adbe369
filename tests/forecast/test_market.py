"""District / city / corpus market signals: causal, keyed by place, saved with the model."""

from __future__ import annotations

import numpy as np
import pytest

from foretab.core.months import Month, month_range
from foretab.core.plan import EntityRef
from foretab.errors import ForecastError
from foretab.forecast.gbm import LightGBMForecaster
from foretab.forecast.market import (
    ALL,
    SEASON_ON_DEMAND,
    Market,
    market_features,
    place_keys,
)
from foretab.forecast.store import StoreModel

from .synthetic import make_panel

REF = Month(2021, 12)
SMALL = {"n_estimators": 60, "num_leaves": 7, "fixed_rounds": 25}


def _places(n: int) -> list[tuple[str, str]]:
    return [place_keys("Nanjing" if i % 3 else "Wuhan", f"D{i % 4}") for i in range(n)]


def _district_panel(n: int = 80, t: int = 30, seed: int = 0) -> np.ndarray:
    """Districts D0/D2 rise 2% a month, D1/D3 fall 1%: the district says where a series goes."""
    rng = np.random.default_rng(seed)
    slope = np.where(np.arange(n) % 2 == 0, 0.02, -0.01)[:, None]
    panel = rng.uniform(9_000, 60_000, n)[:, None] * np.exp(
        slope * np.arange(t)[None, :] + rng.normal(0, 0.01, (n, t))
    )
    panel[rng.random((n, t)) < 0.3] = np.nan
    panel[:, -1] = np.where(np.isnan(panel[:, -1]), panel[:, -2], panel[:, -1])
    return panel


def test_signals_at_a_month_use_nothing_after_it() -> None:
    panel = make_panel(60, 30, seed=1, missing=0.2)
    places = _places(60)
    later = panel.copy()
    later[:, 20:] *= 1.5  # a different future
    a, b = Market.build(panel, places), Market.build(later, places)
    np.testing.assert_array_equal(a.change[:, :20], b.change[:, :20])
    np.testing.assert_array_equal(a.level[:, :20], b.level[:, :20])
    assert not np.allclose(np.nan_to_num(a.level[:, 20:]), np.nan_to_num(b.level[:, 20:]))


def test_members_know_the_corpus_always_and_places_when_given() -> None:
    market = Market.build(make_panel(12, 20), _places(12))
    assert market.keys[0] == ALL
    rows = market.members([place_keys("Wuhan", "D0"), None, ("nowhere", "Atlantis")], 3)
    assert (rows[:, 2] == 0).all()
    assert rows[0, 0] >= 0 and rows[0, 1] >= 0
    assert (rows[1:, :2] == -1).all()
    assert (market.members(None, 2)[:, :2] == -1).all()


def test_trend_features_follow_the_district() -> None:
    panel = _district_panel()
    places = _places(panel.shape[0])
    market = Market.build(panel, places)
    n = panel.shape[0]
    static, seasonal, names = market_features(
        market, market.members(places, n), np.full(n, 29), panel[:, -1], 12
    )
    trend = static[:, names.index("inner_trend6")]
    assert np.nanmean(trend[::2]) > 0.08 and np.nanmean(trend[1::2]) < -0.04
    assert seasonal.shape == (n, 12, 3)
    unknown, _, _ = market_features(
        market, market.members(None, n), np.full(n, 29), panel[:, -1], 1
    )
    assert np.isnan(unknown[:, names.index("inner_trend6")]).all()
    assert np.isfinite(unknown[:, names.index("all_trend6")]).all()


def test_a_model_that_reads_places_beats_one_that_does_not() -> None:
    panel = _district_panel(n=200, t=30)
    fit_part, truth = panel[:, :24], panel[:, 24:30]
    places = _places(200)
    # A short own history: only the last 3 months, so the district carries the trend.
    short = fit_part.copy()
    short[100:, :21] = np.nan
    plain = LightGBMForecaster(0, **SMALL).fit(fit_part[:100])
    placed = LightGBMForecaster(0, market=True, **SMALL).fit(fit_part, places=places)
    placed.observe(short, places)
    err_plain = np.nanmean(np.abs(np.log(plain.predict(short[100:], 6) / truth[100:])))
    err_placed = np.nanmean(
        np.abs(np.log(placed.predict(short[100:], 6, places[100:]) / truth[100:]))
    )
    assert err_placed < 0.8 * err_plain


def test_store_model_round_trips_its_market_and_uses_the_projects_place() -> None:
    values = _district_panel(n=200, t=24)
    refs = tuple(
        EntityRef(p[1], p[0].split("\x1f")[1], f"P{i}") for i, p in enumerate(_places(200))
    )
    months = tuple(month_range(REF - 23, REF))
    plain = LightGBMForecaster(0, **SMALL).fit(values)
    assert not StoreModel("lgbm", REF, 24, 0.0, plain, months[0]).reads_places
    market = LightGBMForecaster(0, market=True, **SMALL)
    market.fit(values, places=[place_keys(r.outer, r.inner) for r in refs])
    model = StoreModel("lgbm_market", REF, 24, 0.0, market, months[0], n_series=200)
    again = StoreModel.from_bytes(model.to_bytes())
    assert again.reads_places
    np.testing.assert_array_equal(again.forecaster.market.level, market.market.level)
    short = values[:4].copy()
    short[:, :21] = np.nan  # little own history: the district matters
    with_place = again.predict(short, 12, refs[:4])
    np.testing.assert_allclose(with_place, model.predict(short, 12, refs[:4]))
    # The same series told it sits in an unknown district forecasts differently.
    nowhere = [EntityRef("Atlantis", "Nowhere", r.name) for r in refs[:4]]
    assert not np.allclose(with_place, again.predict(short, 12, nowhere))


def test_a_model_file_without_the_corpus_group_is_refused() -> None:
    import io
    import json
    import zipfile

    values = _district_panel(n=20, t=24)
    market = LightGBMForecaster(0, market=True, **SMALL).fit(values, places=_places(20))
    model = StoreModel("lgbm_market", REF, 24, 0.0, market, REF - 23)
    buf = io.BytesIO(model.to_bytes())
    with zipfile.ZipFile(buf) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    manifest = json.loads(members["manifest.json"])
    manifest["market_keys"] = ["x" + k for k in manifest["market_keys"]]
    members["manifest.json"] = json.dumps(manifest).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    with pytest.raises(ForecastError, match="market_keys"):
        StoreModel.from_bytes(out.getvalue())


def test_the_remembered_forecast_is_only_reused_for_the_same_series() -> None:
    values = _district_panel(n=60, t=24)
    places = _places(60)
    model = LightGBMForecaster(0, market=True, **SMALL).fit(values, places=places)
    a, b = values[:2], values[2:4]
    first = model.predict(a, 12, places[:2])
    other = model.predict(b, 12, places[2:4])
    assert not np.allclose(first, other)
    np.testing.assert_array_equal(model.predict(a, 12, places[:2]), first)
    moved = model.predict(a, 12, [place_keys("Atlantis", "Nowhere")] * 2)
    assert moved.shape == first.shape  # another key: computed afresh, not the memo
    q = model.predict_quantiles(a, 12, (0.5,), places[:2])
    fresh = LightGBMForecaster(0, market=True, **SMALL).fit(values, places=places)
    np.testing.assert_allclose(q, fresh.predict_quantiles(a, 12, (0.5,), places[:2]))


def _market_reference(
    market: Market, member: np.ndarray, end: np.ndarray, level: np.ndarray, horizon: int
) -> tuple[np.ndarray, np.ndarray]:
    """The market features one level, span and window at a time."""
    from foretab.forecast.features import row_nanmedian
    from foretab.forecast.market import LEVEL_SPAN, LEVELS, TREND_SPANS

    t = market.months
    change = np.nan_to_num(market.change)
    cols, seasonal = [], np.full((len(end), horizon, len(LEVELS)), np.nan)
    for li, name in enumerate(LEVELS):
        for span in TREND_SPANS:
            col = np.full(len(end), np.nan)
            for w, (g, e) in enumerate(zip(member[:, li], end, strict=True)):
                if g < 0 or not 0 <= e < t:
                    continue
                first = max(e - span + 1, 0)
                if np.isfinite(market.change[g, first : e + 1]).sum() >= max(1, span // 2):
                    sums = np.concatenate([[0.0], np.cumsum(change[g])])
                    col[w] = sums[e + 1] - sums[first]
            cols.append(col)
        if name != "all":
            block = np.full((len(end), LEVEL_SPAN), np.nan)
            for w, (g, e) in enumerate(zip(member[:, li], end, strict=True)):
                for k in range(LEVEL_SPAN):
                    if g >= 0 and 0 <= e < t and e - k >= 0:
                        block[w, k] = market.level[g, e - k]
            cols.append(np.log(level) - row_nanmedian(block))
        for w, (g, e) in enumerate(zip(member[:, li], end, strict=True)):
            if g >= 0 and 0 <= e < t:
                ahead = [market.season[g, e, (e + h) % 12] for h in range(1, horizon + 1)]
                seasonal[w, :, li] = np.cumsum(np.nan_to_num(ahead))
    return np.column_stack(cols), seasonal


@pytest.mark.parametrize("seed", range(3))
def test_market_features_equal_a_loop_over_levels_spans_and_windows(seed: int) -> None:
    rng = np.random.default_rng(seed)
    panel = _district_panel(n=60, t=30, seed=seed)
    panel[rng.random(panel.shape) < 0.3] = np.nan
    places = _places(60)
    market = Market.build(panel, places)
    member = market.members([*places[:5], None, ("nowhere", "none")], 7)
    end = np.array([29, 0, 3, 15, -1, 30, 12])
    level = rng.uniform(9_000, 60_000, 7)
    static, seasonal, names = market_features(market, member, end, level, 12)
    expected_static, expected_seasonal = _market_reference(market, member, end, level, 12)
    assert len(names) == static.shape[1]
    assert np.array_equal(static, expected_static, equal_nan=True)
    assert np.array_equal(seasonal, expected_seasonal, equal_nan=True)


def test_a_few_groups_season_tables_are_every_groups_numbers() -> None:
    """A question reads three groups' tables: only those are derived, bit for bit the same."""
    panel = _district_panel(n=60, t=30, seed=4)
    panel[np.random.default_rng(4).random(panel.shape) < 0.3] = np.nan
    market = Market.build(panel, _places(60))
    assert not market._season_all  # nothing derived when a model is built or loaded
    groups = np.array([[1, 2, 0], [3, 1, 0]])
    end = np.array([29, 11])
    few = market.season_at(groups, end)
    assert sorted(market._season_rows) == [0, 1, 2, 3] and not market._season_all
    full = Market(market.keys, market.change, market.level).season
    np.testing.assert_array_equal(few, full[groups, end[:, None]])
    many = np.arange(SEASON_ON_DEMAND + 1).reshape(-1, 1) % len(market.keys)
    ends = np.arange(len(many)) % 30
    np.testing.assert_array_equal(market.season_at(many, ends), full[many, ends[:, None]])
    assert market._season_all  # many windows: every group's tables, once
