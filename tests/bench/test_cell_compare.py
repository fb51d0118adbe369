"""Forecasting / imputation runs compared cell by cell (``bench compare`` on cell details)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from foretab.bench.forecast.cell_compare import (
    CellCompareError,
    cell_rows,
    compare_cell_files,
    is_cell_details,
    write_cell_details,
)
from foretab.cli.main import app, register_commands
from foretab.forecast.metrics import score


def _write(path: Path, model: str, pred: np.ndarray, truth: np.ndarray) -> Path:
    series = [f"s{i}" for i in range(truth.shape[0])]
    months = [f"2024-{k + 1:02d}" for k in range(truth.shape[1])]
    write_cell_details(path, cell_rows(model, series, months, pred, truth))
    return path


def test_cell_rows_are_the_scored_cells() -> None:
    truth = np.array([[100.0, np.nan], [300.0, 400.0]])
    pred = np.array([[110.0, 5.0], [np.nan, 390.0]])
    mask = np.array([[1, 1], [1, 0]])
    rows = list(cell_rows("m", ["a", "b"], ["2024-01", "2024-02"], pred, truth, mask))
    assert [(r["series_id"], r["month"], r["predicted"]) for r in rows] == [
        ("a", "2024-01", 110.0),
        ("b", "2024-01", None),  # no forecast: null, scored as an error of the full value
    ]


def test_a_real_improvement_is_told_from_the_draw(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    truth = rng.uniform(10_000, 40_000, size=(300, 12))
    worse = truth * np.exp(rng.normal(0, 0.10, size=truth.shape))
    better = truth * np.exp(rng.normal(0, 0.07, size=truth.shape))
    a = _write(tmp_path / "a.jsonl", "old", worse, truth)
    b = _write(tmp_path / "b.jsonl", "new", better, truth)
    result = compare_cell_files(a, b)
    assert (result.series, result.cells) == (300, 3_600)
    assert result.mae == (round(score(worse, truth).mae, 2), round(score(better, truth).mae, 2))
    change, low, high = result.mae_change
    assert low < change < high < 0  # sure: B is better
    assert result.mre_change[2] < 0 and result.better > result.worse
    # The same errors on other series: nothing to tell apart.
    same = compare_cell_files(a, a)
    assert same.mae_change == (0.0, 0.0, 0.0) and same.better == same.worse == 0


def test_one_file_with_two_models_needs_their_names(tmp_path: Path) -> None:
    truth = np.full((4, 3), 1_000.0)
    both = tmp_path / "both.jsonl"
    rows = [
        *cell_rows("x", list("abcd"), ["m1", "m2", "m3"], truth * 1.1, truth),
        *cell_rows("y", list("abcd"), ["m1", "m2", "m3"], truth * 1.05, truth),
    ]
    write_cell_details(both, iter(rows))
    with pytest.raises(CellCompareError, match="has the models x, y"):
        compare_cell_files(both, both)
    result = compare_cell_files(both, both, "x", "y")
    assert result.mae == (100.0, 50.0) and result.mae_change == (-50.0, -50.0, -50.0)


def test_files_of_other_splits_are_refused(tmp_path: Path) -> None:
    truth = np.full((3, 2), 1_000.0)
    a = _write(tmp_path / "a.jsonl", "m", truth, truth)
    b = _write(tmp_path / "b.jsonl", "m", truth, truth * 2)  # other true values
    with pytest.raises(CellCompareError, match="share 0 scored cells"):
        compare_cell_files(a, b)
    qa = tmp_path / "qa.jsonl"
    qa.write_text(json.dumps({"id": "x", "task": "reasoning", "gold": [["A"]]}) + "\n")
    assert is_cell_details(a) and not is_cell_details(qa)
    assert not is_cell_details(tmp_path / "missing.jsonl")


def _forecast_csv(path: Path, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    months = [f"{2022 + k // 12}-{k % 12 + 1:02d}" for k in range(36)]
    level = rng.uniform(10_000, 30_000, size=(30, 1))
    values = level * np.exp(np.cumsum(rng.normal(0, 0.02, size=(30, 36)), axis=1))
    frame = pd.DataFrame(values, columns=months)
    frame.insert(0, "series_id", [f"s-{i}" for i in range(30)])
    frame.to_csv(path, index=False, float_format="%.2f")
    return path


def test_cli_compares_two_models_of_one_forecast_run(tmp_path: Path) -> None:
    register_commands()
    train, test = _forecast_csv(tmp_path / "train.csv", 1), _forecast_csv(tmp_path / "t.csv", 2)
    details = tmp_path / "cells.jsonl"
    runner = CliRunner()
    ran = runner.invoke(
        app,
        ["bench", "forecast", "--train", str(train), "--test", str(test),
         "--model", "naive,drift", "--details", str(details)],
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    assert len(details.read_text().splitlines()) == 2 * 30 * 12
    out = tmp_path / "cmp.json"
    compared = runner.invoke(
        app,
        ["bench", "compare", str(details), str(details), "--model-a", "naive",
         "--model-b", "drift", "--json", str(out)],
        env={"COLUMNS": "200"},
    )  # fmt: skip
    assert compared.exit_code == 0, compared.output
    assert "360 cells of 30 series in both runs" in compared.output
    saved = json.loads(out.read_text())
    assert saved["cells"] == 360 and saved["better"] + saved["worse"] <= 360
    assert saved["mae_change"][1] <= saved["mae_change"][0] <= saved["mae_change"][2]
    unnamed = runner.invoke(app, ["bench", "compare", str(details), str(details)])
    assert unnamed.exit_code == 2 and "--model-a" in unnamed.output
