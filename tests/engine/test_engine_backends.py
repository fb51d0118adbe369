"""The same questions give the same answers on DuckDB and PostgreSQL, and the JSON contract holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from foretab.cli.main import app, register_commands
from foretab.engine import Engine
from foretab.store.ingest import ingest_frame

from .test_retrieve_sql import POLY, VANKE, R, corpus

QUESTIONS = [
    f"What will the average price of {POLY.name} in Jiangning, Nanjing be next month?",
    f"What was the average price of {VANKE.name} in Baoan, Shenzhen in each month of the last quarter of 2021?",
    f"Will the average price of {POLY.name} in jiangning district nanjing in the first half of next year be higher than now?",
    "Which will be lower in March 2022: Poly Central Park or Greenland Lixiang City in Jiangning, Nanjing?",
]


def answers(db: str, future: str) -> list[object]:
    with Engine.open(db, future=future) as engine:  # type: ignore[arg-type]
        return [engine.ask(q).answer for q in QUESTIONS]


@pytest.mark.parametrize("future", ["oracle", "none"])
def test_duckdb_and_postgres_agree(pg_server, tmp_path: Path, future: str) -> None:
    duck = str(tmp_path / "c.duckdb")
    pg = pg_server.url(pg_server.fresh_dbname("engine"))
    ingest_frame(corpus(sparse=False), duck, R)
    ingest_frame(corpus(sparse=False), pg, R)
    assert answers(duck, future) == answers(pg, future)


def test_persistence_carries_the_last_price(tmp_path: Path) -> None:
    db = str(tmp_path / "c.duckdb")
    ingest_frame(corpus(), db, R)
    with Engine.open(db, future="none") as engine:
        ans = engine.ask(QUESTIONS[0])
        last = ans.history[POLY][max(ans.history[POLY])]
        assert ans.answer == [[round(last, 2)]]
        assert ans.trace.future_source == "none"


def test_ask_json_and_errors(tmp_path: Path) -> None:
    db = str(tmp_path / "c.duckdb")
    ingest_frame(corpus(), db, R)
    register_commands()
    runner = CliRunner()
    ok = runner.invoke(app, ["ask", QUESTIONS[1], "--db", db, "--json"])
    assert ok.exit_code == 0, ok.output
    data = json.loads(ok.stdout)
    for key in (
        "question",
        "task",
        "answer",
        "text",
        "plan",
        "tables",
        "sql",
        "history",
        "forecast",
        "timings",
    ):
        assert key in data
    assert data["task"] == "history" and len(data["answer"]) == 3
    bad = runner.invoke(
        app,
        [
            "ask",
            "What will the price of Crystal Palace in Jiangning, Nanjing be next month?",
            "--db",
            db,
            "--json",
        ],
    )
    assert bad.exit_code == 2
    error = json.loads(bad.stdout)["error"]
    assert error["type"] == "UnknownEntityError" and "Crystal Palace" in error["message"]
    assert isinstance(error["suggestions"], list)
