"""``foretab demo`` end to end: generate, ingest, read back through the store API."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from foretab.core.months import Month
from foretab.demo.generate import generate_corpus


@pytest.fixture(scope="module")
def app():
    from foretab.cli import demo  # noqa: F401  (registers the command)
    from foretab.cli.main import app

    return app


# The demo also fits the units-sold model after the price model (~2 s of CPU, more than all
# the rest): the fast variant replaces that fit by a stand-in that records the call, the
# slow one runs it.
@pytest.mark.slow_variant("fitted")
@pytest.mark.parametrize("units", ["fitted", "recorded"])
def test_demo_builds_history_and_future(
    app, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, units: str
) -> None:
    from foretab.forecast import units_store
    from foretab.store import open_future, open_history

    fitted: list[Month] = []
    if units == "recorded":
        monkeypatch.setattr(
            units_store, "train_units_model", lambda store, ref, seed=0: fitted.append(ref) or True
        )
    db = tmp_path / "x.duckdb"
    # The forecaster is not what this test checks: the naive one keeps it fast.
    args = ["demo", "--db", str(db), "--model", "naive"]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "December 2023" in result.output
    assert f"foretab tables --db {db}" in result.output
    assert "foretab sql " in result.output
    assert (tmp_path / "x.future.duckdb").exists()

    corpus = generate_corpus(0)
    history, future = open_history(str(db)), open_future(str(db))
    try:
        assert history.reference_month == Month(2023, 12)
        past, ahead = history.panel(), future.panel()
        assert past["month"].max() == "2023-12"
        assert past["month"].min() == "2021-01"
        assert sorted(ahead["month"].unique()) == [f"2024-{m:02d}" for m in range(1, 13)]
        assert len(past) + len(ahead) == len(corpus)
        assert {e.year for e in history.catalog()} == {2021, 2022, 2023}
        assert {e.year for e in future.catalog()} == {2024}
        projects = {(p.outer, p.inner, p.name) for p in history.entities()}
        projects |= {(p.outer, p.inner, p.name) for p in future.entities()}
        assert len(projects) == 180
        if units == "recorded":
            assert fitted == [Month(2023, 12)]
        else:
            assert history.load_artifact(units_store.UNITS_ARTIFACT) is not None
    finally:
        history.close()
        future.close()


@pytest.mark.slow  # a second demo build (~1.4 s); the first stays fast
def test_demo_reference_month_and_seed(app, tmp_path: Path) -> None:
    from foretab.store import open_history

    db = tmp_path / "y.duckdb"
    args = ["demo", "--db", str(db), "--seed", "7", "--reference-month", "2022-06"]
    args += ["--model", "naive"]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    history = open_history(str(db))
    try:
        assert history.reference_month == Month(2022, 6)
        assert len(history.panel()) == (generate_corpus(7)["month"] <= "2022-06").sum()
    finally:
        history.close()


def test_demo_refuses_a_reference_month_outside_the_corpus(app, tmp_path: Path) -> None:
    db = tmp_path / "z.duckdb"
    result = CliRunner().invoke(app, ["demo", "--db", str(db), "--reference-month", "2030-01"])
    assert result.exit_code != 0
    assert "outside the demo corpus" in result.output + str(result.exception)
    assert not db.exists()


def test_demo_help_documents_the_default_db(app) -> None:
    result = CliRunner().invoke(app, ["demo", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "foretab-demo.duckdb" in result.output
    assert "--reference-month" in result.output
    assert "--seed" in result.output


@pytest.mark.slow  # trains the default LightGBM with calibration (~20-40 s on 2 cores)
def test_run_demo_queries_through_the_guard(tmp_path: Path) -> None:
    import io

    from rich.console import Console

    from foretab.cli.demo.run import run_demo
    from foretab.forecast.store import STORE_DEFAULT_FORECASTER

    out = io.StringIO()
    # The default forecaster: `foretab demo` trains it and answers the sample questions.
    result = run_demo(str(tmp_path / "g.duckdb"), console=Console(file=out, width=200))
    assert re.search(
        rf"Forecaster {STORE_DEFAULT_FORECASTER} trained on \d+ projects", out.getvalue()
    )
    assert "will be" in out.getvalue()  # forecasting questions were answered
    assert result.ingest.history_tables == result.overview.history_tables > 0
    assert result.overview.projects == 180
    assert result.sample is not None and result.sample.ran
    assert result.sample.columns == ("project_name", "month", "price", "units_sold")
    assert 1 <= len(result.sample.rows) <= 6
    assert all(row[1].isoformat() <= "2023-12-01" for row in result.sample.rows)
    busiest = result.overview.busiest_project
    assert busiest is not None
    assert {row[0] for row in result.sample.rows} == {busiest.name}
    assert result.sample.sql in out.getvalue()
