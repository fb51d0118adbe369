"""The store forecaster: trained on history only, persisted, loaded without retraining."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from foretab.core.plan import ProjectRef
from foretab.errors import ForecastError
from foretab.forecast.store import (
    fit_store_forecaster,
    load_store_forecaster,
    panel_arrays,
    train_store_forecaster,
)
from foretab.months import Month, month_range
from foretab.store import open_history
from foretab.store.ingest import ingest_frame

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


@pytest.fixture
def store(tmp_path: Path) -> str:
    db = str(tmp_path / "corpus.duckdb")
    ingest_frame(_frame(), db, REF)
    return db


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


def test_train_persist_load_forecast(store: str) -> None:
    fitted = train_store_forecaster(store, "drift")
    assert fitted.reference_month == REF and len(fitted.projects) == 12
    with open_history(store) as hist:
        start = time.perf_counter()
        loaded = load_store_forecaster(hist)
        elapsed = time.perf_counter() - start
    assert elapsed < 1.0
    ref = ProjectRef("Nanjing", "Jiangning District", "Garden 1")
    months = [REF + 1, REF + 12]
    out = loaded.forecast([ref], months)
    assert set(out[ref]) == set(months)
    assert all(8_000 < v < 20_000 for v in out[ref].values())
    assert out == fitted.forecast([ref], months)
    with pytest.raises(ForecastError, match="cannot forecast"):
        loaded.forecast([ref], [REF])
    with pytest.raises(ForecastError, match="cannot forecast"):
        loaded.forecast([ref], [REF + 13])
    with pytest.raises(ForecastError, match="no forecast for project"):
        loaded.forecast([ProjectRef("Nanjing", "Gulou District", "Nowhere")], months)
    with open_history(store) as hist, pytest.raises(ForecastError, match="not 'lgbm'"):
        load_store_forecaster(hist, "lgbm")


def test_missing_model_says_how_to_train(store: str) -> None:
    with open_history(store) as hist, pytest.raises(ForecastError) as err:
        load_store_forecaster(hist)
    assert any("foretab train --db" in s for s in err.value.suggestions)


def test_the_future_store_cannot_change_forecasts(tmp_path: Path) -> None:
    a, b = str(tmp_path / "a.duckdb"), str(tmp_path / "b.duckdb")
    ingest_frame(_frame(future_scale=1.0), a, REF)
    ingest_frame(_frame(future_scale=3.0), b, REF)
    fa = train_store_forecaster(a, "lgbm_nocal")
    fb = train_store_forecaster(b, "lgbm_nocal")
    np.testing.assert_array_equal(fa.values, fb.values)


def test_fit_requires_a_panel_ending_at_the_reference_month() -> None:
    frame = pd.DataFrame(
        {"city": ["A"], "district": ["D"], "project": ["P"], "month": ["2021-06"], "price": [5.0]}
    )
    with pytest.raises(ForecastError, match="reference month"):
        fit_store_forecaster(panel_arrays(frame, Month(2021, 6)), REF, "naive")


def test_train_and_corpus_commands(store: str, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from foretab.cli import bench_forecast as _commands  # noqa: F401  (registers commands)
    from foretab.cli.main import app

    runner = CliRunner()
    result = runner.invoke(app, ["train", "--db", store, "--model", "drift"])
    assert result.exit_code == 0, result.output
    assert "trained drift at 2021-12" in result.output
    out = tmp_path / "corpus.json"
    result = runner.invoke(
        app, ["bench", "corpus", "--db", store, "--model", "naive,drift", "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(out.read_text())
    assert [r["model"] for r in rows] == ["naive", "drift"]
    # Synthetic prices trend up 0.2 %/month: a learned drift beats persistence.
    assert rows[1]["mae"] < rows[0]["mae"]
    assert rows[0]["n_series"] == 12


def test_train_without_reference_month_is_a_clean_error(tmp_path: Path) -> None:
    db = str(tmp_path / "all_history.duckdb")
    ingest_frame(_frame(), db, None)
    with pytest.raises(ForecastError, match="no reference month"):
        train_store_forecaster(db, "naive")


def test_store_default_is_the_registry_default_and_loading_is_light() -> None:
    import subprocess
    import sys

    from foretab.forecast import DEFAULT_FORECASTER
    from foretab.forecast.store import STORE_DEFAULT_FORECASTER

    assert STORE_DEFAULT_FORECASTER == DEFAULT_FORECASTER
    code = "import sys, foretab.forecast.store; print('lightgbm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
