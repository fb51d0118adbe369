"""The learned imputer's training scheme: folds of hidden cells and averaged members."""

from __future__ import annotations

import numpy as np

from foretab.forecast.impute import (
    LightGBMImputer,
    _cell_features,
    hidden_folds,
    interpolate_linear,
)

from .synthetic import make_panel


def test_the_folds_hide_every_observed_cell_exactly_once() -> None:
    observed = np.isfinite(make_panel(50, 24, seed=1))
    masks = hidden_folds(observed, 8, seed=4)
    assert len(masks) == 8
    count = np.sum(masks, axis=0)
    np.testing.assert_array_equal(count, observed.astype(int))
    sizes = np.array([m.sum() for m in masks]) / observed.sum()
    assert np.all((sizes > 0.08) & (sizes < 0.17))
    assert not np.array_equal(masks[0], hidden_folds(observed, 8, seed=5)[0])
    twice = hidden_folds(observed, 8, seed=4, passes=2)
    assert len(twice) == 16
    np.testing.assert_array_equal(np.sum(twice, axis=0), 2 * observed.astype(int))
    assert not np.array_equal(twice[0], twice[8])


def _fill(members: int, seed: int, panel: np.ndarray) -> np.ndarray:
    imputer = LightGBMImputer(seed, n_estimators=30, members=members)
    return imputer.fit(make_panel(80, 24, seed=6)).impute(panel)


def test_members_average_the_single_models_corrections_in_log_space() -> None:
    panel = make_panel(30, 24, seed=7)
    hidden = np.isfinite(panel) & (np.random.default_rng(0).random(panel.shape) < 0.15)
    truth = panel.copy()
    panel[hidden] = np.nan
    todo = ~np.isfinite(panel)
    base = interpolate_linear(panel)
    one, two = _fill(1, 3, panel), _fill(1, 4, panel)
    both = _fill(2, 3, panel)
    assert np.isfinite(both).all()
    np.testing.assert_array_equal(both[~todo], panel[~todo])
    expected = base * np.sqrt((one / base) * (two / base))
    np.testing.assert_allclose(both[todo], expected[todo], rtol=1e-9)
    assert not np.allclose(one[todo], two[todo])
    # a sane fill: near the truth, as the synthetic series move about 2% a month
    assert np.all(np.abs(both[hidden] / truth[hidden] - 1) < 0.25)
    np.testing.assert_array_equal(both, _fill(2, 3, panel))


def test_features_of_a_row_with_nothing_observed_are_missing_not_a_warning() -> None:
    panel = make_panel(5, 24, seed=2)
    panel[1] = np.nan  # a training round can hide every cell of a short series
    feats, base = _cell_features(panel, neighbours=3)
    assert np.isnan(base.reshape(5, 24)[1]).all()
    assert np.isfinite(base.reshape(5, 24)[0]).all()
    assert feats.shape == (5 * 24, 16)


def test_a_neighbour_off_its_own_line_shows_as_a_surprise() -> None:
    panel = np.tile(100.0 * 1.01 ** np.arange(12), (2, 1))
    panel[1, ::2] *= 1.05  # a row that zig-zags 5% about the same trend
    panel[1, 3] *= 1.2  # and spikes just before the hidden cell
    panel[:, 4] = np.nan
    panel[0, 9] = np.nan
    plain, _ = _cell_features(panel, neighbours=3)
    feats, _ = _cell_features(panel, neighbours=3, noise=True)
    np.testing.assert_array_equal(feats[:, : plain.shape[1]], plain)
    assert feats.shape == (2 * 12, plain.shape[1] + 7)
    steady, noisy = feats[4], feats[12 + 4]
    # the nearest neighbours' surprises: none on the steady row; on the other the spike
    # sits 20% over the line from its neighbours (one of them 5% up, weighted 2/3)
    # (columns: the previous two, then the next two)
    np.testing.assert_allclose(steady[-4:], 0.0, atol=1e-9)
    np.testing.assert_allclose(noisy[-4], np.log(1.2) - 2 / 3 * np.log(1.05), atol=1e-9)
    # the row's noise: its changes, their bends and its cells' surprises
    assert np.all(noisy[-7:-4] > steady[-7:-4] + 0.02)
