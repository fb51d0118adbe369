"""The units model saved with the store (issue 30): data only, tied to the store."""

from __future__ import annotations

import io
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from foretab.core.months import Month
from foretab.errors import ForecastError
from foretab.forecast import units
from foretab.forecast.store import train_store_model
from foretab.forecast.units_store import (
    UNITS_ARTIFACT,
    UnitsStoreModel,
    fit_units_store_model,
    load_units_model,
    units_panel,
)
from foretab.store import open_history
from foretab.store.ingest import ingest_frame
from tests.forecast.archives import zip_of
from tests.store_copy import copy_store

REF = Month(2021, 12)


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    rows = []
    for i in range(10):
        for k in range(36):
            m = Month(2020, 1) + k
            if rng.random() < 0.2:
                continue
            rows.append(
                {
                    "city": "Nanjing",
                    "district": "Gulou District",
                    "project": f"Garden {i}",
                    "month": m.iso,
                    "avg_price": 10_000.0 + 100 * i,
                    # 0 is a count (a month with a row and no sale), not a missing month
                    "units_sold": int(rng.poisson(2 + 3 * i)) if k % 7 else 0,
                }
            )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The store ingested from ``_frame()`` once; tests get a copy (they train into it)."""
    db = str(tmp_path_factory.mktemp("pristine") / "corpus.duckdb")
    ingest_frame(_frame(), db, REF)
    return db


@pytest.fixture
def store(pristine: str, tmp_path: Path) -> str:
    return copy_store(pristine, tmp_path)


@pytest.fixture(scope="module")
def fitted() -> UnitsStoreModel:
    frame = _frame().rename(columns={"units_sold": "price"})
    return fit_units_store_model(frame[frame.month <= REF.iso], REF, rounds=20)


def test_units_panel_keeps_zero_sales_and_drops_later_months() -> None:
    frame = _frame().rename(columns={"units_sold": "price"})
    refs, first, values = units_panel(frame, REF)
    assert first == Month(2020, 1) and values.shape == (10, 24)
    zeros = frame[(frame.price == 0) & (frame.month <= REF.iso)]
    assert len(zeros) > 0 and int((values == 0).sum()) == len(zeros)
    assert int(np.isfinite(values).sum()) == int((frame.month <= REF.iso).sum())
    assert [r.name for r in refs] == sorted(f"Garden {i}" for i in range(10))


def test_round_trip_gives_identical_forecasts(fitted: UnitsStoreModel) -> None:
    again = UnitsStoreModel.from_bytes(fitted.to_bytes())
    assert again.reference_month == REF and again.first_month == Month(2020, 1)
    assert again.rounds == 20 and again.n_series == 10
    history = np.array([[5.0] * 12, [np.nan] * 11 + [30.0]])
    a, b = fitted.predict(history, 12), again.predict(history, 12)
    assert a.active is not None and b.active is not None  # the activity booster is saved
    for x, y in ((a.value, b.value), (a.lo, b.lo), (a.hi, b.hi), (a.active, b.active)):
        np.testing.assert_array_equal(x, y)
    assert ((a.active >= 0) & (a.active <= 1)).all()
    assert (a.lo <= a.value).all() and (a.value <= a.hi).all() and (a.lo >= 0).all()


def test_predict_lays_the_history_out_as_the_training_panel(fitted: UnitsStoreModel) -> None:
    # The calendar feature counts from the panel's first month: a 12-month window ending
    # at R must give what the model gives on the full-width panel.
    history = np.array([[4.0, 6.0, 8.0, 5.0, 7.0, 9.0, 3.0, 5.0, 6.0, 8.0, 7.0, 6.0]])
    full = np.concatenate([np.full((1, 12), np.nan), history], axis=1)  # 2020-01..2021-12
    direct = fitted.model.predict(full, 3)
    np.testing.assert_array_equal(fitted.predict(history, 3).value, direct.value)


class _Payload:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.marker), "w"))


@pytest.mark.parametrize("kind", ["garbage", "pickle", "foreign manifest", "bad booster"])
def test_an_invalid_units_file_is_refused_and_runs_no_code(
    store: str, fitted: UnitsStoreModel, tmp_path: Path, kind: str
) -> None:
    marker = tmp_path / "ran"
    good = zipfile.ZipFile(io.BytesIO(fitted.to_bytes()))
    members = {n: good.read(n) for n in good.namelist()}
    data = {
        "garbage": b"not a zip",
        "pickle": pickle.dumps(_Payload(marker)),
        "foreign manifest": zip_of({**members, "manifest.json": b'{"format": "x", "exec": 1}'}),
        "bad booster": zip_of({**members, "lo.txt": pickle.dumps(_Payload(marker))}),
    }[kind]
    with open_history(store) as hist:
        hist.save_artifact(UNITS_ARTIFACT, data)
        with pytest.raises(ForecastError) as err:
            load_units_model(hist)
    assert "units model file is invalid" in err.value.message
    assert any("foretab train --db DB" in s for s in err.value.suggestions)
    assert not marker.exists(), "loading the units model ran code from the store"


def test_a_store_without_a_units_model_names_the_fix(store: str) -> None:
    with open_history(store) as hist, pytest.raises(ForecastError) as err:
        load_units_model(hist)
    assert "no units model is stored" in err.value.message
    assert any("foretab train --db DB" in s for s in err.value.suggestions)


def test_a_units_model_of_another_reference_month_is_refused(store: str) -> None:
    frame = _frame().rename(columns={"units_sold": "price"})
    old = fit_units_store_model(frame, Month(2021, 6), rounds=5)
    with open_history(store) as hist:
        hist.save_artifact(UNITS_ARTIFACT, old.to_bytes())
        with pytest.raises(ForecastError, match="trained at 2021-06"):
            load_units_model(hist)


@pytest.mark.usefixtures("tiny_lgbm")
def test_train_saves_a_units_model_fitted_on_the_history_only(store: str) -> None:
    train_store_model(store, "drift")
    with open_history(store) as hist:
        saved = load_units_model(hist)
        frame = hist.panel(summed=True)
    assert saved.reference_month == REF and saved.n_series == 10
    assert saved.rounds == units.ROUNDS  # the test fixture's, stated in the file
    # The same fit from the history's own rows (no future month) gives the same model.
    again = fit_units_store_model(frame, REF, rounds=saved.rounds)
    history = np.array([[3.0] * 12])
    np.testing.assert_allclose(saved.predict(history, 12).value, again.predict(history, 12).value)
    assert frame.month.max() == REF.iso
