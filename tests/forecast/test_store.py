"""The store model: fitted on history only, saved as data, forecasting any history given."""

from __future__ import annotations

import dataclasses
import io
import json
import pickle
import time
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from foretab.core.months import Month, month_range
from foretab.errors import ForecastError
from foretab.forecast import units_store
from foretab.forecast.store import (
    ARTIFACT_NAME,
    LEGACY_ARTIFACT,
    StoreModel,
    fit_store_model,
    load_store_model,
    panel_arrays,
    train_store_model,
)
from foretab.store import open_history
from foretab.store.ingest import ingest_frame
from tests.store_copy import copy_store
from tests.units_fit import fit_once

REF = Month(2021, 12)


def _frame(future_scale: float = 1.0, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(12):
        base = 10_000 + 3_000 * i
        for k, m in enumerate(month_range(Month(2020, 1), Month(2022, 12))):
            if rng.random() < 0.25:
                continue
            price = base * (1 + 0.002 * k) * (future_scale if m > REF else 1.0)
            rows.append(
                {
                    "city": "Nanjing",
                    "district": "Jiangning District" if i % 2 else "Gulou District",
                    "project": f"Garden {i}",
                    "month": m.iso,
                    "avg_price": round(price, 2),
                    "units_sold": 3,
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


@pytest.fixture(autouse=True)
def _units_fitted_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every training here also fits and saves the units model (``train_units_model``); the
    stores share one history, so that fit is done once (``tests/units_fit.py``): ~12 fits
    of ~0.25 s each became one. What these tests check is the price model."""
    monkeypatch.setattr(units_store, "fit_units_store_model", fit_once)


def _history(db: str) -> np.ndarray:
    with open_history(db) as hist:
        return panel_arrays(hist.panel(), REF).window(24)


class _Payload:
    """A pickle that would create ``marker`` when unpickled."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.marker), "w"))


def _assert_invalid(db: str, marker: Path | None = None) -> ForecastError:
    with open_history(db) as hist, pytest.raises(ForecastError) as err:
        load_store_model(hist)
    assert "model file is invalid" in err.value.message
    assert any("foretab train --db DB" in s for s in err.value.suggestions)
    if marker is not None:
        assert not marker.exists(), "loading the model ran code from the store"
    return err.value


def test_panel_arrays_drops_months_after_the_last() -> None:
    frame = pd.DataFrame(
        {
            "city": ["A", "A", "A"],
            "district": ["D", "D", "D"],
            "project": ["P", "P", "P"],
            "month": ["2021-11", "2021-12", "2022-01"],
            "price": [1.0, 2.0, 99.0],
        }
    )
    panel = panel_arrays(frame, REF)
    assert panel.months[-1] == REF and panel.values.shape == (1, 2)
    assert 99.0 not in panel.values
    assert panel.window(4).shape == (1, 4) and np.isnan(panel.window(4)[0, :2]).all()


@pytest.mark.usefixtures("tiny_lgbm")
@pytest.mark.parametrize("model", ["naive", "drift", "lgbm", "lgbm_nocal"])
def test_round_trip_gives_identical_predictions(store: str, model: str) -> None:
    fitted = train_store_model(store, model)
    assert fitted.reference_month == REF and fitted.lookback == 24 and fitted.n_series == 12
    history = _history(store)
    with open_history(store) as hist:
        start = time.perf_counter()
        loaded = load_store_model(hist)
        elapsed = time.perf_counter() - start
    assert elapsed < 1.0
    assert loaded.model == model and loaded.reference_month == REF
    # Models with intervals are calibrated on a backtest; the file says so.
    method = "backtest-per-series" if model.startswith("lgbm") else "in-sample"
    assert fitted.interval_method == loaded.interval_method == method
    expected = fitted.predict(history, 12)
    assert expected.shape == (12, 12) and np.isfinite(expected).all()
    np.testing.assert_array_equal(loaded.predict(history, 12), expected)
    np.testing.assert_array_equal(loaded.predict(history, 3), fitted.predict(history, 3))
    if model.startswith("lgbm"):
        q = (0.1, 0.5, 0.9)
        np.testing.assert_array_equal(
            loaded.predict_quantiles(history, 12, q), fitted.predict_quantiles(history, 12, q)
        )
        # Per-series intervals: the scale model is saved with the quantiles.
        assert fitted.forecaster.spread is not None  # type: ignore[attr-defined]
        assert loaded.forecaster.spread == fitted.forecaster.spread  # type: ignore[attr-defined]
        # The drift (here 0: 12 series give too few residuals) is saved with them; a set
        # one moves horizon h's point and quantiles by h x drift and round-trips.
        drifted = fitted.forecaster
        assert loaded.forecaster.location_drift == drifted.location_drift == 0.0  # type: ignore[attr-defined]
        drifted.location_drift = -0.002  # type: ignore[attr-defined]
        again = StoreModel.from_bytes(fitted.to_bytes())
        assert again.forecaster.location_drift == -0.002  # type: ignore[attr-defined]
        moved = again.predict_quantiles(history, 12, q)
        ratio = moved / loaded.predict_quantiles(history, 12, q)
        expected_ratio = np.broadcast_to(
            np.exp(-0.002 * np.arange(1, 13))[None, :, None], ratio.shape
        )
        np.testing.assert_allclose(ratio, expected_ratio)
        point = again.predict(history, 12) / loaded.predict(history, 12)
        np.testing.assert_allclose(point, expected_ratio[:, :, 0])


@pytest.mark.usefixtures("tiny_lgbm")
def test_the_file_is_data_only(store: str, tmp_path: Path) -> None:
    train_store_model(store, "lgbm")
    data = (tmp_path / "corpus.artifacts" / ARTIFACT_NAME).read_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = zf.namelist()
        manifest = json.loads(zf.read("manifest.json"))
        booster = zf.read("booster_0.txt").decode()
    assert names == ["manifest.json", "booster_0.txt"]
    assert manifest["format"] == "foretab-store-model" and manifest["format_version"] == 2
    assert manifest["model"] == "lgbm" and manifest["reference_month"] == "2021-12"
    assert manifest["lookback"] == 24
    assert np.asarray(manifest["residual_quantiles"]).shape == (12, 101)
    assert booster.startswith("tree\n")  # LightGBM's own text format


@pytest.mark.usefixtures("tiny_lgbm")
def test_forecasts_follow_the_history_given(store: str) -> None:
    fitted = train_store_model(store, "drift")
    history = _history(store)
    np.testing.assert_allclose(fitted.predict(2 * history, 1), 2 * fitted.predict(history, 1))
    lgbm = train_store_model(store, "lgbm")
    ratio = lgbm.predict(2 * history, 1) / lgbm.predict(history, 1)
    assert np.all((ratio > 1.6) & (ratio < 2.4))
    with pytest.raises(ForecastError, match="reads 24 months"):
        fitted.predict(history[:, -12:], 1)


@pytest.mark.usefixtures("tiny_lgbm")
@pytest.mark.parametrize("where", ["artifact", "manifest", "booster", "legacy"])
def test_a_pickle_payload_runs_nothing(store: str, tmp_path: Path, where: str) -> None:
    train_store_model(store, "lgbm")
    marker = tmp_path / f"pwned-{where}"
    payload = pickle.dumps(_Payload(marker))
    folder = tmp_path / "corpus.artifacts"
    if where == "artifact":
        (folder / ARTIFACT_NAME).write_bytes(payload)
    elif where == "legacy":
        (folder / ARTIFACT_NAME).unlink()
        (folder / LEGACY_ARTIFACT).write_bytes(payload)
    else:
        member = "manifest.json" if where == "manifest" else "booster_0.txt"
        original = (folder / ARTIFACT_NAME).read_bytes()
        buf = io.BytesIO()
        with zipfile.ZipFile(io.BytesIO(original)) as src, zipfile.ZipFile(buf, "w") as dst:
            for name in src.namelist():
                dst.writestr(name, payload if name == member else src.read(name))
        (folder / ARTIFACT_NAME).write_bytes(buf.getvalue())
    error = _assert_invalid(store, marker)
    if where == "legacy":
        assert "old pickle model" in error.message


def test_missing_corrupt_and_foreign_files_are_invalid(store: str, tmp_path: Path) -> None:
    _assert_invalid(store)  # nothing trained yet
    good = train_store_model(store, "drift").to_bytes()
    path = tmp_path / "corpus.artifacts" / ARTIFACT_NAME
    path.write_bytes(good[: len(good) // 2])
    _assert_invalid(store)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("manifest.json", json.dumps({"format": "someone-elses-model", "x": 1}))
    path.write_bytes(buf.getvalue())
    _assert_invalid(store)
    manifest = json.loads(zipfile.ZipFile(io.BytesIO(good)).read("manifest.json"))
    for change in ({"model": "evil"}, {"drift": [1.0]}, {"extra_field": True}):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr("manifest.json", json.dumps({**manifest, **change}))
        path.write_bytes(buf.getvalue())
        _assert_invalid(store)


def test_reference_month_and_model_must_match(store: str) -> None:
    fitted = train_store_model(store, "drift")
    with open_history(store) as hist:
        with pytest.raises(ForecastError, match="not 'lgbm'"):
            load_store_model(hist, "lgbm")
        moved = dataclasses.replace(fitted, reference_month=REF - 1)
        hist.save_artifact(ARTIFACT_NAME, moved.to_bytes())
        with pytest.raises(ForecastError, match="trained at 2021-11") as err:
            load_store_model(hist)
    assert any("foretab train --db DB" in s for s in err.value.suggestions)


def test_models_without_a_data_only_format_are_refused_before_fitting(store: str) -> None:
    start = time.perf_counter()
    with pytest.raises(ForecastError, match="cannot be a store model"):
        train_store_model(store, "timesnet")
    with pytest.raises(ForecastError, match="cannot be a store model"):
        train_store_model(store, "no_such_model")
    assert time.perf_counter() - start < 1.0


@pytest.mark.usefixtures("tiny_lgbm")
def test_the_future_store_cannot_change_forecasts(tmp_path: Path) -> None:
    a, b = str(tmp_path / "a.duckdb"), str(tmp_path / "b.duckdb")
    ingest_frame(_frame(future_scale=1.0), a, REF)
    ingest_frame(_frame(future_scale=3.0), b, REF)
    history = _history(a)
    np.testing.assert_array_equal(history, _history(b))
    fa = train_store_model(a, "lgbm_nocal")
    fb = train_store_model(b, "lgbm_nocal")
    np.testing.assert_array_equal(fa.predict(history), fb.predict(history))


def test_fit_requires_a_panel_ending_at_the_reference_month() -> None:
    frame = pd.DataFrame(
        {"city": ["A"], "district": ["D"], "project": ["P"], "month": ["2021-06"], "price": [5.0]}
    )
    with pytest.raises(ForecastError, match="reference month"):
        fit_store_model(panel_arrays(frame, Month(2021, 6)), REF, "naive")


def test_train_and_corpus_commands(store: str, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from foretab.cli.main import app, register_commands

    register_commands()
    runner = CliRunner()
    result = runner.invoke(app, ["train", "--db", store, "--model", "drift"])
    assert result.exit_code == 0, result.output
    assert "trained drift at 2021-12 on 12 series" in result.output
    # the units model is fitted beside the price model, and the line says so
    assert "a units-sold model beside it" in " ".join(result.output.split())
    out, cells = tmp_path / "corpus.json", tmp_path / "cells.jsonl"
    result = runner.invoke(
        app,
        ["bench", "corpus", "--db", store, "--model", "naive,drift", "--json", str(out),
         "--details", str(cells)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = json.loads(out.read_text())
    assert [r["model"] for r in rows] == ["naive", "drift"]
    # Synthetic prices trend up 0.2 %/month: a learned drift beats persistence.
    assert rows[1]["mae"] < rows[0]["mae"]
    assert rows[0]["n_series"] == 12
    # Every scored cell of both models, for `bench compare`: the same MAE, paired.
    compared = runner.invoke(
        app,
        ["bench", "compare", str(cells), str(cells), "--model-a", "naive", "--model-b", "drift",
         "--json", str(tmp_path / "cmp.json")],
    )  # fmt: skip
    assert compared.exit_code == 0, compared.output
    paired = json.loads((tmp_path / "cmp.json").read_text())
    assert paired["series"] == 12 and paired["cells"] == rows[0]["n_points"]
    assert paired["mae"] == [round(rows[0]["mae"], 2), round(rows[1]["mae"], 2)]
    first = json.loads(cells.read_text().splitlines()[0])
    assert first["month"] == "2022-01" and first["series_id"].count(" / ") == 2
    # --stored scores the saved model (drift, trained above) instead of refitting it.
    result = runner.invoke(
        app, ["bench", "corpus", "--db", store, "--model", "drift", "--stored", "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    stored = json.loads(out.read_text())
    assert stored[0]["mae"] == rows[1]["mae"] and "coverage" not in stored[0]


def test_store_default_is_the_registry_default_and_loading_is_light() -> None:
    import subprocess
    import sys

    from foretab.forecast import DEFAULT_FORECASTER
    from foretab.forecast.store import STORE_DEFAULT_FORECASTER

    assert STORE_DEFAULT_FORECASTER == DEFAULT_FORECASTER
    code = "import sys, foretab.forecast.store; print('lightgbm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.postgres
@pytest.mark.usefixtures("tiny_lgbm")
def test_postgres_artifacts_round_trip_and_refuse_pickles(pg_db: str, tmp_path: Path) -> None:
    ingest_frame(_frame(), pg_db, REF)
    fitted = train_store_model(pg_db, "lgbm")
    history = _history(pg_db)
    with open_history(pg_db) as hist:
        loaded = load_store_model(hist)
        np.testing.assert_array_equal(loaded.predict(history), fitted.predict(history))
        marker = tmp_path / "pwned-pg"
        hist.save_artifact(ARTIFACT_NAME, pickle.dumps(_Payload(marker)))
    _assert_invalid(pg_db, marker)


@pytest.mark.usefixtures("tiny_lgbm")
def test_the_trace_and_ask_say_the_drift_forecasts_were_moved_by(store: str) -> None:
    from foretab.cli.ask import explain
    from foretab.engine import Engine

    fitted = train_store_model(store, "lgbm")
    fitted.forecaster.location_drift = -0.002  # type: ignore[attr-defined]
    with open_history(store) as hist:
        hist.save_artifact(ARTIFACT_NAME, fitted.to_bytes())
    question = (
        "What will the average price of Garden 3 in Jiangning District, Nanjing be next month?"
    )
    with Engine.open(store) as engine:
        answer = engine.ask(question)
    assert answer.forecast.drift_per_month == -0.002
    step = next(s for s in answer.to_doc().steps if s.stage == "forecast")
    assert step.drift_per_month == -0.002  # type: ignore[union-attr]
    assert any("recent drift, -0.20% a month" in line for line in explain(answer))


@pytest.mark.usefixtures("tiny_lgbm")
def test_training_with_fitted_tails_saves_and_reads_them(
    store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from foretab.forecast import calibrate

    # 12 series give the later origins ~180 residuals (under MIN_RESIDUALS): a lower
    # floor lets the fit run.
    monkeypatch.setattr(calibrate, "MIN_RESIDUALS", 20)
    fitted = train_store_model(store, "lgbm", intervals="per-series-tails")
    tails = fitted.forecaster.tails  # type: ignore[attr-defined]
    assert tails is not None and fitted.interval_method == "backtest-per-series"
    with open_history(store) as hist:
        loaded = load_store_model(hist)
    assert loaded.forecaster.tails == tails  # type: ignore[attr-defined]
    history, q = _history(store), (0.1, 0.5, 0.9)
    np.testing.assert_array_equal(
        loaded.predict_quantiles(history, 12, q), fitted.predict_quantiles(history, 12, q)
    )
    with pytest.raises(ForecastError, match="unknown interval calibration"):
        train_store_model(store, "lgbm", intervals="per-series-tail")
