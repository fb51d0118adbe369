"""``foretab sql``: rows as a table or JSON; refusals exit 2 with the reason."""

from __future__ import annotations

import json

import pytest
from sql_stores import FUTURE_2022, HISTORY_2021, PROJECT
from typer.testing import CliRunner

from foretab.cli import query, store_cmds  # noqa: F401  (register the commands)
from foretab.cli.main import app

runner = CliRunner()


def _sql(store, *args: str):
    return runner.invoke(app, ["sql", *args, "--db", store.db])


def test_json_output(store, clean_cwd) -> None:
    result = _sql(
        store,
        f"SELECT month, price FROM {HISTORY_2021} WHERE project_name = '{PROJECT}' ORDER BY month",
        "--json",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["columns"] == ["month", "price"]
    assert data["truncated"] is False
    assert [row[0] for row in data["rows"]] == [f"2021-{m:02d}-01" for m in range(1, 13)]
    assert data["rows"][0][1] == 21_010.0


def test_json_truncated_and_decimals(store, clean_cwd) -> None:
    result = _sql(
        store,
        f"SELECT CAST(price AS DECIMAL(12, 2)) AS p FROM {HISTORY_2021} ORDER BY price",
        "--json",
        "--max-rows",
        "3",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["truncated"] is True
    assert data["rows"] == [[21_010.0], [21_020.0], [21_030.0]]


def test_table_output(store, clean_cwd) -> None:
    result = _sql(store, f"SELECT count(*) AS n FROM {HISTORY_2021}")
    assert result.exit_code == 0, result.output
    assert "24" in result.stdout
    assert "1 row" in result.stdout


def test_refusal_exits_2_with_reason_on_stderr(store, clean_cwd) -> None:
    before = store.snapshot()
    result = _sql(store, f"DROP TABLE {HISTORY_2021}")
    assert result.exit_code == 2
    assert "refused (read-only)" in result.stderr
    assert result.stdout == ""
    assert store.snapshot() == before


def test_refusal_with_json_prints_error_object(store, clean_cwd) -> None:
    result = _sql(store, f"SELECT * FROM {FUTURE_2022}", "--json")
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["type"] == "GuardError"
    assert error["rule"] == "unknown-table"
    assert FUTURE_2022 in error["message"]
    assert "unknown-table" in result.stderr


def test_timeout_exits_2(store, clean_cwd) -> None:
    result = _sql(
        store,
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
        "--timeout",
        "0.5",
        "--json",
    )
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["type"] == "QueryError"
    assert "timed out after 0.5 s" in error["message"]


@pytest.mark.parametrize("bad", ["", "SELECT 1; SELECT 2"])
def test_bad_statements_exit_2(store, clean_cwd, bad) -> None:
    result = _sql(store, bad)
    assert result.exit_code == 2
    assert "refused" in result.stderr


def test_forecast_relation_needs_the_store_model(store, clean_cwd) -> None:
    """The shared guard store has no fitted model: the error says how to fit one."""
    result = _sql(store, f"SELECT * FROM forecast('{HISTORY_2021}')")
    assert result.exit_code == 2
    assert "no model is stored" in result.stderr
    refused = _sql(store, f"SELECT * FROM forecast('{FUTURE_2022}')")
    assert refused.exit_code == 2
    assert "refused (forecast-table)" in refused.stderr
