"""`foretab ingest` leaves a store that answers forecasting questions straight away."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from foretab.cli.main import app, register_commands
from foretab.core.months import Month
from foretab.errors import ForecastError
from foretab.forecast.store import load_store_model
from foretab.store import open_history

from .test_store import _frame

QUESTION = "What will the price of Garden 1 in Jiangning District, Nanjing be next month?"


@pytest.fixture
def csv(tmp_path: Path) -> Path:
    path = tmp_path / "prices.csv"
    _frame().to_csv(path, index=False)
    return path


def _ingest(*args: str) -> object:
    register_commands()
    return CliRunner().invoke(app, ["ingest", *args], env={"COLUMNS": "200"})


def test_ingest_trains_and_the_store_answers(csv: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "c.duckdb")
    result = _ingest(str(csv), "--db", db, "--reference-month", "2021-12", "--model", "drift")
    assert result.exit_code == 0, result.output
    assert "trained drift at 2021-12 on 12 series" in result.output
    with open_history(db) as store:
        assert load_store_model(store).model == "drift"
    asked = CliRunner().invoke(app, ["ask", QUESTION, "--db", db, "--json"])
    assert asked.exit_code == 0, asked.output
    data = json.loads(asked.stdout)
    assert data["task"] != "history"
    value = data["answer"][0][0]
    assert isinstance(value, float) and 10_000 < value < 20_000


def test_no_train_and_the_default_reference_month(csv: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "c.duckdb")
    result = _ingest(str(csv), "--db", db, "--no-train")
    assert result.exit_code == 0, result.output
    assert "trained" not in result.output
    with open_history(db) as store:
        assert store.reference_month == Month(2022, 12)  # the last month in the file
        with pytest.raises(ForecastError, match="model file is invalid"):
            load_store_model(store)


def test_a_model_that_cannot_be_stored_is_refused_before_ingesting(
    csv: Path, tmp_path: Path
) -> None:
    db = tmp_path / "c.duckdb"
    result = _ingest(str(csv), "--db", str(db), "--model", "timesnet")
    assert result.exit_code == 2
    assert "cannot be a store model" in result.output
    assert not db.exists()


def test_a_reference_month_outside_the_data_is_refused(csv: Path, tmp_path: Path) -> None:
    db = tmp_path / "c.duckdb"
    result = _ingest(str(csv), "--db", str(db), "--reference-month", "2023-06")
    assert result.exit_code == 2
    assert "outside the data's range 2020-01..2022-12" in result.output
    assert not db.exists()


def test_a_history_too_short_to_train_on_is_stored_and_said_so(csv: Path, tmp_path: Path) -> None:
    # Two months gave a numpy traceback from the feature builder, after the store was written.
    frame = _frame()
    short = tmp_path / "short.csv"
    frame[frame["month"].isin(["2021-11", "2021-12"])].to_csv(short, index=False)
    db = str(tmp_path / "c.duckdb")
    result = _ingest(str(short), "--db", db, "--reference-month", "2021-12")
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())  # the console wraps at its own width
    assert "not trained" in said
    assert "2 month(s) up to the reference month (2021-11..2021-12)" in said
    retrained = CliRunner().invoke(app, ["train", "--db", db])
    assert retrained.exit_code == 2
    assert "training needs at least 7" in retrained.output
    asked = CliRunner().invoke(
        app,
        [
            "ask",
            QUESTION.replace("will", "was").replace(" be next month", " last month"),
            "--db",
            db,
            "--json",
        ],
    )
    assert asked.exit_code == 0, asked.output
