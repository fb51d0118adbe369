"""The TimeFore SQL agent reads forecasts with forecast(): "top 3 by 2022 forecast" in one statement.

Through the fake server: the prompt documents the relation, the scripted LLM ranks the
projects with one forecast() statement through ``sqlQueryTool`` and answers from its rows;
the ranking is the rules engine's answer to the same question.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from foretab.core.months import Month
from foretab.engine import Engine, build_engine
from foretab.llm import OpenAIProvider
from tests.llm.fake_openai import Scripted, completion_body
from tests.timefore.scripted import ScriptedModel

MINI_CSV = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "mini.csv"
QUESTION = (
    "Which 3 projects in Huangpu District, Shanghai will have the highest average price in 2022?"
)
TABLE_2021 = "project_price_table_huangpu_district_shanghai_2021"
CAPTIONS = [
    "Project Price Table for Huangpu District, Shanghai, 2020",
    "Project Price Table for Huangpu District, Shanghai, 2021",
]
TOP_3 = (
    "SELECT project_name, AVG(value) AS forecast_price FROM "
    f"forecast('{TABLE_2021}', horizon => 12) GROUP BY project_name "
    "ORDER BY forecast_price DESC LIMIT 3"
)
HISTORY_SQL = (
    "SELECT project_name, month, price FROM project_price_table_huangpu_district_shanghai_2020 "
    f"UNION ALL SELECT project_name, month, price FROM {TABLE_2021};"
)


def _rows_doc(text: str) -> dict:
    """The rows document of a sqlQueryTool result (quoted as data; a note may follow)."""
    return json.loads(text.split("<data>", 1)[1].split("</data>", 1)[0])


@pytest.fixture(scope="module")
def model_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The mini corpus with the default store model fitted (forecast() needs it)."""
    from foretab.forecast.store import train_store_model
    from foretab.store.ingest import ingest_path

    db = str(tmp_path_factory.mktemp("timefore-forecast") / "mini.duckdb")
    ingest_path(MINI_CSV, db, Month(2021, 12))
    train_store_model(db)
    return db


class ForecastingLLM:
    """A model that ranks with forecast() first, then reads the history as the prompt asks."""

    def __init__(self) -> None:
        self.ranking: list[str] = []
        self.sql_system = ""
        self.model = ScriptedModel(
            captions=lambda q: CAPTIONS,
            sql=lambda q: HISTORY_SQL,
            answer=lambda q: repr([[name] for name in self.ranking]),
        )

    def __call__(self, body: dict[str, Any]) -> Scripted | str:
        messages = body["messages"]
        if "sqlQueryTool" not in (messages[0]["content"] or ""):
            return self.model(body)
        self.sql_system = messages[0]["content"]
        tool_results = [m for m in messages if m["role"] == "tool"]
        if not tool_results:
            return _tool_call(TOP_3)
        if len(tool_results) == 1:
            rows = _rows_doc(tool_results[0]["content"])["rows"]
            self.ranking = [row[0] for row in rows]
            return _tool_call(HISTORY_SQL)
        return json.dumps({"sql": HISTORY_SQL})


def _tool_call(sql: str) -> Scripted:
    return Scripted(body=completion_body(None, [("sqlQueryTool", {"sql_statement": sql})]))


@pytest.fixture
def llm(fake_openai) -> Iterator[tuple[ForecastingLLM, OpenAIProvider]]:
    scripted = ForecastingLLM()
    fake_openai.respond_with(scripted)
    yield scripted, OpenAIProvider(fake_openai.options())


@pytest.mark.slow  # trains a model store (~2 s)
def test_top_three_by_forecast_in_one_statement(llm, model_db: str) -> None:
    scripted, provider = llm
    with build_engine(model_db, "timefore", llm=provider) as engine:
        answer = engine.ask(QUESTION)
    # The prompt tells the LLM about the relation, with the one-statement ranking example.
    assert "forecast('<table name>'" in scripted.sql_system
    assert "December 2021" in scripted.sql_system
    tools = [s for s in answer.trace.steps if s.stage == "tool" and s.tool == "sqlQueryTool"]
    assert tools[0].ok and TOP_3 in tools[0].arguments
    rows = _rows_doc(tools[0].result)["rows"]
    assert len(rows) == 3
    with Engine.open(model_db) as rules:
        expected = rules.ask(QUESTION).answer
        # The tool's numbers are the store model's, as `foretab ask` forecasts them.
        direct = rules.sql(TOP_3).rows
    assert [[name] for name, _ in rows] == expected
    assert [[name, round(value, 6)] for name, value in rows] == [
        [name, round(value, 6)] for name, value in direct
    ]
    assert answer.answer == expected
    assert answer.engine == "timefore"


@pytest.mark.slow  # trains a model store (~2 s)
def test_a_bad_forecast_call_is_repaired_from_its_rule(fake_openai, model_db: str) -> None:
    scripted = ForecastingLLM()
    statements = iter(
        [
            f"SELECT * FROM forecast('{TABLE_2021}', horizon => 60)",
            "SELECT * FROM forecast('project_price_table_huangpu_district_shanghai_2022')",
            TOP_3,
        ]
    )
    seen: list[str] = []

    def respond(body: dict[str, Any]) -> Scripted | str:
        messages = body["messages"]
        if "sqlQueryTool" in (messages[0]["content"] or ""):
            results = [m["content"] for m in messages if m["role"] == "tool"]
            seen[:] = results
            if len(results) < 3:
                return _tool_call(next(statements))
            if len(results) == 3:
                scripted.ranking = [row[0] for row in _rows_doc(results[2])["rows"]]
                return _tool_call(HISTORY_SQL)
            return json.dumps({"sql": HISTORY_SQL})
        return scripted(body)

    fake_openai.respond_with(respond)
    with build_engine(model_db, "timefore", llm=OpenAIProvider(fake_openai.options())) as engine:
        engine.ask(QUESTION)
    assert seen[0].startswith("Error: refused (forecast-option)")
    assert seen[1].startswith("Error: refused (forecast-table)")  # the future year: no table
    assert len(_rows_doc(seen[2])["rows"]) == 3
