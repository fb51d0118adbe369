"""`foretab tables` lists the history catalog, filtered, as a table or JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from foretab.cli.main import app, register_commands
from foretab.core.months import Month
from foretab.store.ingest import ingest_frame

from .test_ingest import GOOD_ROWS, HEADER


def test_tables_json_and_filters(tmp_path: Path) -> None:
    db = str(tmp_path / "c.duckdb")
    ingest_frame(pd.DataFrame(GOOD_ROWS, columns=HEADER.split(",")), db, Month(2020, 12))
    register_commands()
    runner = CliRunner()
    every = json.loads(runner.invoke(app, ["tables", "--db", db, "--json"]).stdout)
    assert [t["name"] for t in every] == [
        "project_price_table_jiangning_district_nanjing_2020",
        "project_price_table_baoan_district_shenzhen_2020",
    ]
    assert set(every[0]) == {"name", "caption", "city", "district", "year", "rows"}
    only = json.loads(
        runner.invoke(app, ["tables", "--db", db, "--json", "--city", "shenzhen"]).stdout
    )
    assert [t["district"] for t in only] == ["Bao'an District"]
    missing = runner.invoke(app, ["tables", "--db", str(tmp_path / "none.duckdb")])
    assert missing.exit_code == 2
