"""``foretab tableqa`` through the fake server: every answer type on DataBench tables,
the fixer, JSON errors, and a store's history table read through the guard."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from foretab.cli.main import app, register_commands

register_commands()
runner = CliRunner()

# (dataset, question, generated body, expected answer text, type) — questions from qa.jsonl.
CASES = [
    ("066_IBM_HR", "Is our average employee older than 35?",
     "return df['Age'].mean() > 35", "True", "boolean"),
    pytest.param("073_Med_Cost", "Which region has the highest average charges?",
     "return df.groupby('region', observed=True)['charges'].mean().idxmax()", "southeast", "category",
     marks=pytest.mark.slow),
    pytest.param("072_Admissions", "How many applicants have a GRE score of at least 330?",
     "return int((df['GRE Score'] >= 330).sum())", None, "number", marks=pytest.mark.slow),
    ("074_Lift", "Which lift types are there?",
     "return sorted(df['Lift Type'].unique().tolist())", "['Bench Press', 'Deadlift', 'Squat']", "list[category]"),
    ("066_IBM_HR", "List the top 3 ages.",
     "return df['Age'].nlargest(3).tolist()", "[60, 60, 60]", "list[number]"),
]  # fmt: skip


def code(body: str) -> str:
    return f"```python\nimport pandas as pd\n\ndef answer(df):\n    {body}\n```"


def invoke(fake_openai, *args: str) -> object:
    return runner.invoke(
        app,
        [
            "tableqa",
            *args,
            "--llm-base-url",
            fake_openai.base_url,
            "--llm-model",
            fake_openai.model,
        ],
    )


@pytest.mark.parametrize(("dataset", "question", "body", "text", "kind"), CASES)
def test_every_answer_type(fake_openai, databench_dir, dataset, question, body, text, kind) -> None:
    table = databench_dir / "tables" / dataset / "all.parquet"
    fake_openai.reply(code(body))
    result = invoke(fake_openai, question, "--table", str(table), "--pipeline", "ag", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["type"] == kind
    if text is not None:
        assert out["answer_text"] == text
    assert set(out) >= {"answer", "type", "code", "columns", "attempts", "timings"}
    assert out["attempts"][0]["ok"] is True


def test_fixer_recovers_through_the_cli(fake_openai, databench_dir) -> None:
    table = databench_dir / "tables" / "066_IBM_HR" / "all.parquet"
    fake_openai.reply("['Age']")
    fake_openai.reply(code("return df['AGE'].mean() > 35"))
    fake_openai.reply(code("return df['Age'].mean() > 35"))
    result = invoke(
        fake_openai, "Is our average employee older than 35?", "--table", str(table), "--json"
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["answer"] is True and out["columns"] == ["Age"]
    assert [a["ok"] for a in out["attempts"]] == [False, True]
    assert out["attempts"][0]["error"]["error_type"] == "KeyError"


def test_failure_exits_2_with_json_error(fake_openai, databench_dir) -> None:
    table = databench_dir / "tables" / "066_IBM_HR" / "all.parquet"
    fake_openai.reply(code("return open('/etc/passwd').read()"))
    result = invoke(
        fake_openai, "Show me secrets", "--table", str(table), "--pipeline", "ag", "--json"
    )
    assert result.exit_code == 2
    error = json.loads(result.stdout.strip().splitlines()[-1])["error"]
    assert error["type"] == "TableQAError" and "refused" in error["message"]
    assert error["attempts"][0]["error"]["kind"] == "refused"


def test_no_llm_configured_is_a_clear_error(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("FORETAB_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("FORETAB_LLM_MODEL", raising=False)
    table = tmp_path / "t.csv"
    pd.DataFrame({"a": [1]}).to_csv(table, index=False)
    result = runner.invoke(app, ["tableqa", "Q?", "--table", str(table), "--json"])
    assert result.exit_code == 2
    assert (
        "--llm-base-url" in json.loads(result.stdout.strip().splitlines()[-1])["error"]["message"]
    )


@pytest.mark.slow
def test_csv_table_and_text_output(fake_openai, tmp_path) -> None:
    table = tmp_path / "prices.csv"
    pd.DataFrame({"city": ["A", "B"], "price": [3.5, 7.25]}).to_csv(table, index=False)
    fake_openai.reply(code("return float(df['price'].sum())"))
    result = invoke(fake_openai, "Total price?", "--table", str(table), "--pipeline", "ag")
    assert result.exit_code == 0, result.output
    assert "10.75" in result.output and "(number)" in result.output


def test_store_history_table_through_the_guard(fake_openai, tmp_path) -> None:
    from foretab.core.months import Month
    from foretab.store.ingest import ingest_frame
    from tests.sql.sql_stores import HISTORY_2021, demo_frame

    db = str(tmp_path / "corpus.duckdb")
    ingest_frame(demo_frame(), db, Month.parse("2021-12"))
    fake_openai.reply(code("return df['project_name'].nunique()"))
    result = invoke(
        fake_openai,
        "How many projects?",
        "--db",
        db,
        "--table-name",
        HISTORY_2021,
        "--pipeline",
        "ag",
        "--json",
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["answer"] == 2
    refused = invoke(fake_openai, "Q?", "--db", db, "--table-name", "foretab_secret", "--json")
    assert refused.exit_code == 2
    assert "not a table" in refused.output
