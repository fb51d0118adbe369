"""The benchmark commands on tiny files in the shared CSV formats."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from foretab.bench.forecast.models import bench_forecast, bench_impute, selection_split
from foretab.cli.bench import forecast as _commands  # noqa: F401  (registers commands)
from foretab.cli.main import app
from foretab.errors import ForecastError
from foretab.forecast.data import read_forecast_csv, read_impute_csv
from foretab.forecast.registry import DEFAULT_FORECASTER

from .synthetic import make_panel

KEYS = {"model", "mse", "mae", "mre", "n_series", "n_points", "fit_seconds", "predict_seconds"}


def _months(n: int) -> list[str]:
    return [f"{2022 + k // 12}-{k % 12 + 1:02d}" for k in range(n)]


def _write_forecast(path: Path, seed: int) -> Path:
    panel = make_panel(40, 36, seed=seed)
    df = pd.DataFrame(panel, columns=_months(36))
    df.insert(0, "series_id", [f"s-{i}" for i in range(len(df))])
    df.to_csv(path, index=False, float_format="%.2f")
    return path


def _write_impute(path: Path, seed: int) -> Path:
    panel = make_panel(40, 24, seed=seed)
    rng = np.random.default_rng(seed)
    mask = np.isfinite(panel) & (rng.random(panel.shape) < 0.15)
    months = _months(24)
    df = pd.DataFrame(panel, columns=months)
    for j, m in enumerate(months):
        df[f"mask_{m}"] = mask[:, j].astype(int)
    df.insert(0, "series_id", [f"s-{i}" for i in range(len(df))])
    df.to_csv(path, index=False, float_format="%.2f")
    return path


def test_forecast_csv_blank_is_missing(tmp_path: Path) -> None:
    split = read_forecast_csv(_write_forecast(tmp_path / "f.csv", 1))
    assert split.history.shape == (40, 24) and split.target.shape == (40, 12)
    assert np.isnan(split.history).any()


def test_bench_forecast_cli_writes_the_issue_format(tmp_path: Path) -> None:
    train = _write_forecast(tmp_path / "train.csv", 1)
    test = _write_forecast(tmp_path / "test.csv", 2)
    out = tmp_path / "out.json"
    result = CliRunner().invoke(
        app,
        [
            "bench",
            "forecast",
            "--train",
            str(train),
            "--test",
            str(test),
            "--model",
            "naive,drift",
            "--json",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(out.read_text())
    assert [r["model"] for r in rows] == ["naive", "drift"]
    for r in rows:
        assert KEYS <= set(r) <= KEYS | {"default", "mae_interval", "mre_interval"}
        assert r["n_series"] == 40 and r["n_points"] > 0
        # How far another 40 series could move the scores: a bootstrap over whole series.
        assert r["mae_interval"][0] < r["mae"] < r["mae_interval"][1]
        assert r["mre_interval"][0] < r["mre"] < r["mre_interval"][1]
    assert "MAE" in result.output and "MAE 95%" in result.output


@pytest.mark.usefixtures("tiny_lgbm")
def test_bench_forecast_marks_the_default_and_times_3000(tmp_path: Path) -> None:
    train = _write_forecast(tmp_path / "train.csv", 1)
    test = _write_forecast(tmp_path / "test.csv", 2)
    result = bench_forecast(train, test, val=test, model=f"naive,{DEFAULT_FORECASTER}")
    assert [r.default for r in result.rows] == [False, True]
    assert result.default_predict_3000_s is not None and result.default_predict_3000_s > 0


def test_bench_impute_scores_masked_cells(tmp_path: Path) -> None:
    train = _write_impute(tmp_path / "train.csv", 1)
    test = _write_impute(tmp_path / "test.csv", 2)
    rows = bench_impute(train, test, model="linear")
    assert rows[0].model == "linear" and rows[0].n_points > 0
    assert rows[0].mre < 0.2


def test_the_selection_split_holds_out_a_quarter_of_the_series_with_their_masks(
    tmp_path: Path,
) -> None:
    split = read_impute_csv(_write_impute(tmp_path / "train.csv", 1))
    fit, held = selection_split(split, seed=3)
    assert len(held.series_id) == 10 and fit.shape == (30, 24)
    rows = [split.series_id.index(s) for s in held.series_id]
    np.testing.assert_array_equal(held.values, split.values[rows])
    np.testing.assert_array_equal(held.mask, split.mask[rows])
    # the fit panel is exactly the other series, every value of them
    others = sorted(set(range(40)) - set(rows))
    np.testing.assert_array_equal(fit, split.values[others])
    assert selection_split(split, seed=3)[1].series_id == held.series_id
    assert selection_split(split, seed=4)[1].series_id != held.series_id


def test_bench_impute_scores_the_selection_split_without_a_test_file(tmp_path: Path) -> None:
    train = _write_impute(tmp_path / "train.csv", 1)
    rows = bench_impute(train, None, model="linear", split_seed=0)
    assert rows[0].n_series == 10 and rows[0].n_points > 0
    with pytest.raises(ForecastError, match="either a test file or a selection split"):
        bench_impute(train, train, model="linear", split_seed=0)
    with pytest.raises(ForecastError, match="either a test file or a selection split"):
        bench_impute(train, None, model="linear")
    out = tmp_path / "out.json"
    args = ["bench", "impute", "--train", str(train), "--select-split", "0"]
    result = CliRunner().invoke(app, [*args, "--model", "linear", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())[0]["n_series"] == 10


def test_a_transductive_bench_fits_on_the_scored_series_with_their_cells_hidden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from foretab.forecast import registry
    from foretab.forecast.impute import LinearImputer

    seen: list[np.ndarray] = []

    class Recording(LinearImputer):
        def fit(self, panel: np.ndarray) -> Recording:
            seen.append(panel)
            return self

    monkeypatch.setitem(registry.IMPUTERS, "linear", lambda seed: Recording(seed))
    train = _write_impute(tmp_path / "train.csv", 1)
    test = _write_impute(tmp_path / "test.csv", 2)
    plain = bench_impute(train, test, model="linear")
    both = bench_impute(train, test, model="linear", transductive=True)
    assert both[0].mae == plain[0].mae  # linear learns nothing from the extra rows
    split = read_impute_csv(test)
    assert seen[0].shape == (40, 24) and seen[1].shape == (80, 24)
    np.testing.assert_array_equal(seen[1][40:], split.masked)
    assert np.isnan(seen[1][40:][split.mask]).all()


def test_unknown_model_is_a_clean_error(tmp_path: Path) -> None:
    train = _write_forecast(tmp_path / "train.csv", 1)
    with pytest.raises(ForecastError, match="unknown forecaster"):
        bench_forecast(train, train, model="arima")
    result = CliRunner().invoke(
        app, ["bench", "forecast", "--train", str(train), "--test", str(train), "--model", "arima"]
    )
    assert result.exit_code == 2
