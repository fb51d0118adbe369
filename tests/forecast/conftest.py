"""A tiny LightGBM configuration, so tests of plumbing do not pay for real training."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from foretab.forecast import registry, units
from foretab.forecast.gbm import LightGBMForecaster


@pytest.fixture
def tiny_lgbm() -> Iterator[None]:
    """The LightGBM models with a few small trees (same code path, same file format).

    The store's units model too: 20 rounds per booster instead of ``units.ROUNDS``' 300
    (its manifest records the rounds).
    """
    saved = dict(registry.FORECASTERS)
    saved_rounds = units.ROUNDS
    units.ROUNDS = 20
    small = {"n_estimators": 60, "num_leaves": 7, "fixed_rounds": 25}
    registry.FORECASTERS["lgbm"] = lambda seed: LightGBMForecaster(seed, **small)
    registry.FORECASTERS["lgbm_nocal"] = lambda seed: LightGBMForecaster(
        seed, calendar=False, **small
    )
    registry.FORECASTERS["lgbm_market"] = lambda seed: LightGBMForecaster(
        seed, market=True, **small
    )
    try:
        yield
    finally:
        registry.FORECASTERS.clear()
        registry.FORECASTERS.update(saved)
        units.ROUNDS = saved_rounds
