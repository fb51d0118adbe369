"""``foretab ask --file`` (one warm engine, one line out per question), ``--version``, and
a ``--db`` that is not a DuckDB file (issue 31, item 6)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from foretab.cli import ask  # noqa: F401  (register the command)
from foretab.cli.main import app

runner = CliRunner()
GOOD = "What was the price of Bund Garden in Huangpu District, Shanghai in March 2021?"
BAD = "What is the rent of Bund Garden in Huangpu District, Shanghai?"


def test_a_jsonl_file_is_answered_line_by_line_with_one_error_object(
    mini_duckdb: str, tmp_path: Path
) -> None:
    path = tmp_path / "questions.jsonl"
    lines = [json.dumps(GOOD), json.dumps({"question": BAD}), json.dumps({"question": GOOD})]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["ask", "--file", str(path), "--db", mini_duckdb, "--json"])
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.exit_code == 2  # one line failed
    assert len(out) == 3
    assert out[0]["answer"] == out[2]["answer"] and out[0]["canonical"]
    assert out[1]["question"] == BAD and "rent" in out[1]["error"]["message"]


def test_a_text_file_prints_one_line_per_question(mini_duckdb: str, tmp_path: Path) -> None:
    path = tmp_path / "questions.txt"
    path.write_text(f"{GOOD}\n\n{GOOD}\n", encoding="utf-8")
    result = runner.invoke(app, ["ask", "--file", str(path), "--db", mini_duckdb])
    assert result.exit_code == 0, result.output
    assert len(result.stdout.splitlines()) == 2


def test_question_or_file_not_both(mini_duckdb: str, tmp_path: Path) -> None:
    result = runner.invoke(app, ["ask", "--db", mini_duckdb])
    assert result.exit_code != 0


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.startswith("foretab")


def test_a_file_that_is_not_duckdb_gets_our_message(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("not a database\n", encoding="utf-8")
    result = runner.invoke(app, ["ask", GOOD, "--db", str(path)])
    assert result.exit_code == 2
    assert "is not a foretab store" in result.stderr and "IO Error" not in result.stderr
