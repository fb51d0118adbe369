"""The units-sold model fitted on a history once per process, however many tests need it.

The golden units cases (both backends) and ``tests/engine/test_units_future.py`` each
fitted the real configuration (300 rounds, ~1.3 s of CPU) on the same mini history. A fit
is a function of the panel, the reference month, the seed and the rounds, so a model fitted
on an equal panel is the model a new fit would give; the session fixture ``units_fit_once``
(tests/conftest.py) also puts its users on one xdist worker.
"""

from __future__ import annotations

import hashlib

import pandas as pd

from foretab.core.months import Month
from foretab.forecast.units_store import UnitsStoreModel, fit_units_store_model

_FITTED: dict[tuple[object, ...], UnitsStoreModel] = {}


def fit_once(
    frame: pd.DataFrame, reference_month: Month, seed: int = 0, rounds: int | None = None
) -> UnitsStoreModel:
    """``fit_units_store_model(frame, reference_month, seed, rounds)``, kept by its inputs."""
    digest = hashlib.sha256(pd.util.hash_pandas_object(frame, index=True).to_numpy().tobytes())
    key = (digest.digest(), repr(list(frame.columns)), str(reference_month), seed, rounds)
    if key not in _FITTED:
        _FITTED[key] = fit_units_store_model(frame, reference_month, seed, rounds)
    return _FITTED[key]
