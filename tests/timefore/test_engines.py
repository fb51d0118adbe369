"""The LLM engines end to end: real HTTP to the fake server, the real ``openai`` client."""

from __future__ import annotations

import json

import duckdb
import pytest
from typer.testing import CliRunner

from foretab.cli.main import app, register_commands
from foretab.engine import build_engine
from foretab.errors import QuestionError
from foretab.llm import OpenAIProvider
from tests.llm.fake_openai import Scripted, completion_body
from tests.timefore.scripted import ScriptedModel

QUESTION = "What will the price of Bund Garden in Huangpu District, Shanghai be next month?"
# The rules refuse to explain ("describe"): a question for the agents in the hybrid engine.
UNPLANNABLE = "Describe the outlook for Bund Garden in Huangpu District, Shanghai"
CAPTIONS = [
    "Project Price Table for Huangpu District, Shanghai, 2020",
    "Project Price Table for Huangpu District, Shanghai, 2021",
]
GOOD_SQL = (
    "SELECT project_name, month, price FROM project_price_table_huangpu_district_shanghai_2020 "
    "WHERE project_name = 'Bund Garden' UNION ALL SELECT project_name, month, price FROM "
    "project_price_table_huangpu_district_shanghai_2021 WHERE project_name = 'Bund Garden';"
)


def scripted(**kwargs) -> ScriptedModel:
    values = {
        "captions": lambda q: CAPTIONS,
        "sql": lambda q: GOOD_SQL,
        "answer": lambda q: "It should be around [[61234.5]] yuan per square metre.",
    }
    values.update(kwargs)
    return ScriptedModel(**values)


def cli(*args: str):
    register_commands()
    return CliRunner().invoke(app, list(args))


def llm_flags(server) -> list[str]:
    return ["--llm-base-url", server.base_url, "--llm-model", server.model]


def test_timefore_answers_through_the_fake_server(fake_openai, mini_duckdb) -> None:
    model = scripted()
    fake_openai.respond_with(model)
    result = cli(
        "ask", QUESTION, "--db", mini_duckdb, "--engine", "timefore", "--tool-model", "drift",
        "--json", *llm_flags(fake_openai),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["answer"] == [[61234.5]]
    assert doc["engine"] == "timefore"
    assert model.seen == [
        "captions", "sql", "sql", "forecaster", "forecaster", "analyzer", "normalise",
    ]  # fmt: skip
    assert doc["llm"]["calls"] == 7 == len(fake_openai.requests)
    assert doc["llm"]["prompt_tokens"] == 7 * 12
    stages = [s["stage"] for s in doc["steps"]]
    assert stages.count("llm") == 7 and stages.count("tool") == 2
    tools = [s for s in doc["steps"] if s["stage"] == "tool"]
    assert tools[0]["tool"] == "sqlQueryTool" and tools[0]["ok"]
    assert tools[1]["tool"] == "imputationThenPredictionTool" and tools[1]["ok"]
    # The prompt the server received is the one in the trace, dated for R = 2021-12.
    first = doc["steps"][1]
    assert first["purpose"] == "caption summary"
    assert "December 2021" in first["messages"][0]["content"]
    assert "2021-12-31" in fake_openai.requests[1]["messages"][0]["content"]
    # The history is what the LLM's SQL read through the guard.
    assert doc["tables"] == [
        "project_price_table_huangpu_district_shanghai_2020",
        "project_price_table_huangpu_district_shanghai_2021",
    ]
    assert "Bund Garden" in doc["sql"] and doc["history"][0]["project"] == "Bund Garden"
    # The forecasting tool was sent the 24 months and forecast the 12 after R.
    sent = json.loads(tools[1]["arguments"])
    assert len(sent["data"]) == 24
    assert len(doc["forecast"][0]["values"]) == 12


def test_sql_is_repaired_from_the_tool_error(fake_openai, mini_duckdb) -> None:
    bad = GOOD_SQL.replace("price FROM", "avg_price FROM", 1)
    attempts = iter([bad, GOOD_SQL])
    model = scripted()
    state = {"sql": None}

    def respond(body):
        if (
            body["messages"][0]["content"].find("sqlQueryTool") >= 0
            and body["messages"][-1]["role"] != "tool"
        ):
            state["sql"] = next(attempts)
            return ScriptedModel._tool("sqlQueryTool", {"sql_statement": state["sql"]})
        if "sqlQueryTool" in body["messages"][0]["content"]:
            result = body["messages"][-1]["content"]
            if result.startswith("Error"):
                return "I will fix it."  # no SQL: the agent asks again
            return json.dumps({"sql": state["sql"]})
        return model(body)

    fake_openai.respond_with(respond)
    llm = OpenAIProvider(fake_openai.options())
    with build_engine(mini_duckdb, "timefore", llm=llm, tool_model="drift") as engine:
        answer = engine.ask(QUESTION)
    tools = [s for s in answer.trace.steps if s.stage == "tool" and s.tool == "sqlQueryTool"]
    assert [t.ok for t in tools] == [False, True]
    assert "avg_price" in tools[0].arguments and tools[0].result.startswith("Error")
    retries = [s for s in answer.trace.steps if s.stage == "retry"]
    assert retries and "no SQL" in retries[0].reason
    assert answer.history.series and answer.answer == [[61234.5]]


def _store_state(db: str) -> tuple:
    con = duckdb.connect(db, read_only=True)
    try:
        tables = con.execute(
            "SELECT table_name FROM information_schema.tables ORDER BY 1"
        ).fetchall()
        rows = con.execute(
            "SELECT count(*) FROM project_price_table_huangpu_district_shanghai_2021"
        ).fetchone()
    finally:
        con.close()
    return tuple(tables), rows


def test_hostile_sql_is_refused_and_the_store_is_unchanged(fake_openai, mini_duckdb) -> None:
    before = _store_state(mini_duckdb)
    hostile = [
        "DROP TABLE project_price_table_huangpu_district_shanghai_2021",
        "SELECT project_name, month, price FROM project_price_table_huangpu_district_shanghai_2022",
        "DELETE FROM foretab_catalog",
        "SELECT 1; DROP TABLE foretab_catalog",
    ]

    def respond(body):
        first = body["messages"][0]["content"]
        if "<Summary>" in first:
            return repr(CAPTIONS)
        n = sum(m["role"] == "tool" for m in body["messages"])
        return ScriptedModel._tool("sqlQueryTool", {"sql_statement": hostile[n % len(hostile)]})

    fake_openai.respond_with(respond)
    result = cli(
        "ask", QUESTION, "--db", mini_duckdb, "--engine", "timefore", "--json",
        "--max-sql-iterations", "6", *llm_flags(fake_openai),
    )  # fmt: skip
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["type"] == "AgentError" and "6 iteration" in error["message"]
    tool_results = [
        m["content"] for m in fake_openai.requests[-1]["messages"] if m["role"] == "tool"
    ]
    assert len(tool_results) == 5 and all(r.startswith("Error: refused") for r in tool_results)
    assert any("2022" in r for r in tool_results)
    assert len(fake_openai.requests) == 1 + 6
    assert _store_state(mini_duckdb) == before


def test_hybrid_sends_nothing_for_a_rules_question(fake_openai, mini_duckdb) -> None:
    fake_openai.respond_with(scripted())
    llm = OpenAIProvider(fake_openai.options())
    with build_engine(
        mini_duckdb, "hybrid", llm=llm, tool_model="drift", future="oracle"
    ) as engine:
        answer = engine.ask(QUESTION)
        assert answer.engine == "hybrid:rules" and not answer.trace.llm_calls
        assert fake_openai.requests == []
        with pytest.raises(QuestionError):  # the premise: the rules cannot plan it
            engine.rules.planner.plan(UNPLANNABLE)
        fallback = engine.ask(UNPLANNABLE)
    assert fallback.engine == "hybrid:timefore"
    # The open plan's answer names the project the agents found and the classifier's type.
    assert [p.name for p in fallback.plan.entities] == ["Bund Garden"]
    assert fallback.task.value in {"forecast", "reasoning", "history"}
    assert len(fake_openai.requests) == len(fallback.trace.llm_calls) > 0
    assert next(iter(fallback.history.series)).name == "Bund Garden"


def test_hybrid_keeps_unknown_entities_as_errors(fake_openai, mini_duckdb) -> None:
    result = cli(
        "ask", "What will the price of Crystal Palace in Huangpu District, Shanghai be next month?",
        "--db", mini_duckdb, "--engine", "hybrid", "--json", *llm_flags(fake_openai),
    )  # fmt: skip
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["type"] == "UnknownEntityError"
    assert fake_openai.requests == []


@pytest.mark.parametrize("engine", ["timefore", "vanilla", "hybrid"])
def test_llm_engine_without_llm_is_a_clear_error(engine, mini_duckdb, monkeypatch) -> None:
    for var in ("FORETAB_LLM_BASE_URL", "FORETAB_LLM_MODEL", "FORETAB_LLM_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    result = cli("ask", QUESTION, "--db", mini_duckdb, "--engine", engine, "--json")
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["type"] == "EngineChoiceError"
    assert f"--engine {engine} needs an LLM" in error["message"]
    assert "--llm-base-url" in error["message"]


def test_garbage_replies_end_in_a_clear_error_within_the_budget(fake_openai, mini_duckdb) -> None:
    fake_openai.respond_with(lambda body: "lorem ipsum, no list here")
    result = cli(
        "ask", QUESTION, "--db", mini_duckdb, "--engine", "timefore", "--json",
        *llm_flags(fake_openai),
    )  # fmt: skip
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["type"] == "AgentError" and "lorem ipsum" in error["message"]
    assert len(fake_openai.requests) == 3  # the caption call and its two bounded retries
    # The failure report carries the LLM steps up to it: three calls, two retries.
    steps = json.loads(result.stdout)["steps"]
    assert [s["stage"] for s in steps] == ["llm", "retry", "llm", "retry", "llm"]
    assert steps[0]["reply"] == "lorem ipsum, no list here"
    assert "no usable answer" in steps[1]["reason"]


def test_non_json_body_and_budget(fake_openai, mini_duckdb, tmp_path) -> None:
    config = tmp_path / "llm.toml"
    config.write_text("[llm]\nmax_calls_per_question = 2\nmax_retries = 0\n")
    fake_openai.respond_with(lambda body: Scripted(body="<html>oops</html>"))
    result = cli(
        "ask", QUESTION, "--db", mini_duckdb, "--engine", "timefore", "--json",
        "--llm-config", str(config), *llm_flags(fake_openai),
    )  # fmt: skip
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["type"].startswith("LLM")
    assert len(fake_openai.requests) <= 2


def test_http_500_then_success_and_a_timeout(fake_openai, mini_duckdb) -> None:
    fake_openai.error(500).reply("slow", delay_s=1.5)
    fake_openai.respond_with(scripted())
    llm = OpenAIProvider(fake_openai.options(timeout_s=0.5, max_retries=3))
    with build_engine(mini_duckdb, "timefore", llm=llm, tool_model="drift") as engine:
        answer = engine.ask(QUESTION)
    first = answer.trace.llm_calls[0]
    assert first.attempts == 3
    assert first.retry_reasons[0] == "HTTP 500" and "timeout" in first.retry_reasons[1]
    assert answer.answer == [[61234.5]]


def test_forecaster_repairs_malformed_tool_arguments(fake_openai, mini_duckdb) -> None:
    model = scripted()
    bad = iter(
        [
            "{not json",
            json.dumps({"data": [1.0] * 23, "project": "single"}),
            json.dumps({"data": "a string", "project": "single"}),
        ]
    )

    def respond(body):
        first = body["messages"][0]["content"]
        tool_msgs = [m for m in body["messages"] if m["role"] == "tool"]
        if "imputationThenPredictionTool" in first and len(tool_msgs) < 3:
            args = next(bad)
            return Scripted(body=completion_body(None, [("imputationThenPredictionTool", args)]))
        return model(body)

    fake_openai.respond_with(respond)
    llm = OpenAIProvider(fake_openai.options())
    with build_engine(mini_duckdb, "timefore", llm=llm, tool_model="drift") as engine:
        answer = engine.ask(QUESTION)
    tools = [
        s for s in answer.trace.steps
        if s.stage == "tool" and s.tool == "imputationThenPredictionTool"
    ]  # fmt: skip
    assert [t.ok for t in tools] == [False, False, False, True]
    assert "not JSON" in tools[0].result
    assert "23 values" in tools[1].result and "exactly 24" in tools[1].result
    assert "JSON array" in tools[2].result
    assert answer.answer == [[61234.5]]


def test_vanilla_predicts_from_the_history(fake_openai, mini_duckdb) -> None:
    seen = []

    def respond(body):
        seen.append(body)
        return "Based on the trend: [[60000.0]]"

    fake_openai.respond_with(respond)
    llm = OpenAIProvider(fake_openai.options())
    with build_engine(mini_duckdb, "vanilla", llm=llm) as engine:
        answer = engine.ask(QUESTION)
    assert answer.answer == [[60000.0]] and len(seen) == 1
    prompt = seen[0]["messages"][0]["content"]
    assert "<History Price>:<data>[['January 2020'" in prompt
    assert answer.trace.future_source == "vanilla.llm-predicts"
    assert answer.trace.tables[-1] == "project_price_table_huangpu_district_shanghai_2021"


def test_final_answer_sql_goes_through_the_guard_too(fake_openai, mini_duckdb) -> None:
    before = _store_state(mini_duckdb)
    finals = iter(
        [
            json.dumps({"sql": "DROP TABLE project_price_table_huangpu_district_shanghai_2021;"}),
            "```sql\nSELECT * FROM foretab_meta\n```",
            json.dumps({"sql": GOOD_SQL}) + "\nThis reads both years.",
        ]
    )
    model = scripted()

    def respond(body):
        if "sqlQueryTool" in body["messages"][0]["content"]:
            return next(finals)  # never calls the tool: the final SQL is checked anyway
        return model(body)

    fake_openai.respond_with(respond)
    llm = OpenAIProvider(fake_openai.options())
    with build_engine(mini_duckdb, "timefore", llm=llm, tool_model="drift") as engine:
        answer = engine.ask(QUESTION)
    retries = [s.reason for s in answer.trace.steps if s.stage == "retry"]
    assert len(retries) == 2 and all("refused" in r for r in retries)
    assert answer.answer == [[61234.5]]
    assert _store_state(mini_duckdb) == before


def test_sql_tool_with_a_wrong_argument_type_is_told_so(fake_openai, mini_duckdb) -> None:
    calls = iter([{"sql_statement": 42}, {"query": GOOD_SQL}])
    model = scripted()

    def respond(body):
        messages = body["messages"]
        if "sqlQueryTool" in messages[0]["content"]:
            if sum(m["role"] == "tool" for m in messages) < 2:
                return ScriptedModel._tool("sqlQueryTool", next(calls))
            return json.dumps({"sql": GOOD_SQL})
        return model(body)

    fake_openai.respond_with(respond)
    llm = OpenAIProvider(fake_openai.options())
    with build_engine(mini_duckdb, "timefore", llm=llm, tool_model="drift") as engine:
        answer = engine.ask(QUESTION)
    tools = [s for s in answer.trace.steps if s.stage == "tool" and s.tool == "sqlQueryTool"]
    assert [t.ok for t in tools] == [False, True]
    assert "must be a string of SQL, got int" in tools[0].result


def test_forecasting_tool_uses_the_store_model_on_the_llm_data(
    fake_openai, mini_duckdb, monkeypatch
) -> None:
    import numpy as np

    from foretab.core.months import Month
    from foretab.forecast import store as store_models
    from foretab.forecast.registry import get_imputer
    from foretab.store import open_history

    with open_history(mini_duckdb) as store:
        panel = store_models.panel_arrays(store.panel(), Month(2021, 12))
    fitted = store_models.fit_store_model(panel, Month(2021, 12), "drift")
    monkeypatch.setattr(store_models, "load_store_model", lambda store, model=None: fitted)
    fake_openai.respond_with(scripted())
    llm = OpenAIProvider(fake_openai.options())
    with build_engine(mini_duckdb, "timefore", llm=llm) as engine:
        answer = engine.ask(QUESTION)
    (tool,) = [s for s in answer.trace.steps if s.stage == "tool" and s.tool.startswith("imput")]
    data = json.loads(tool.arguments)["data"]
    series = np.array([[np.nan if v == "-" else v for v in data]], dtype=float)
    expected = fitted.predict(get_imputer("linear").impute(series), 12)[0]
    (points,) = answer.forecast.points.values()
    assert [round(p.value, 6) for _, p in sorted(points.items())] == [
        round(float(v), 6) for v in expected
    ]
    assert answer.trace.future_source == "timefore.forecaster:linear+drift"


def test_tool_calls_written_as_text_are_run(fake_openai, mini_duckdb) -> None:
    """Models without native tool calling (some Ollama / llama.cpp setups) write the call."""
    model = scripted()

    def respond(body):
        messages = body["messages"]
        first = messages[0]["content"]
        if "sqlQueryTool" in first:
            if "sqlQueryTool result:" in (messages[-1]["content"] or ""):
                return json.dumps({"sql": GOOD_SQL})
            call = {"name": "sqlQueryTool", "arguments": {"sql_statement": GOOD_SQL}}
            return f"<tool_call>\n{json.dumps(call)}\n</tool_call>"
        if "imputationThenPredictionTool" in first:
            if "imputationThenPredictionTool result:" in (messages[-1]["content"] or ""):
                return "<Future Price>: done"
            native = model(body)
            (args,) = [
                c["function"]["arguments"]
                for c in native.body["choices"][0]["message"]["tool_calls"]
            ]
            return (
                "```json\n"
                + json.dumps(
                    {"name": "imputationThenPredictionTool", "arguments": json.loads(args)}
                )
                + "\n```"
            )
        return model(body)

    fake_openai.respond_with(respond)
    llm = OpenAIProvider(fake_openai.options())
    with build_engine(mini_duckdb, "timefore", llm=llm, tool_model="drift") as engine:
        answer = engine.ask(QUESTION)
    tools = [s for s in answer.trace.steps if s.stage == "tool"]
    assert [(t.tool, t.ok) for t in tools] == [
        ("sqlQueryTool", True), ("imputationThenPredictionTool", True),
    ]  # fmt: skip
    # Results went back as user text: no tool message without a matching tool call.
    assert all(m["role"] != "tool" for r in fake_openai.requests for m in r["messages"])
    assert answer.answer == [[61234.5]]


def test_a_store_without_a_model_is_not_blamed_on_the_llm(fake_openai, mini_duckdb) -> None:
    fake_openai.respond_with(scripted())
    result = cli(
        "ask", QUESTION, "--db", mini_duckdb, "--engine", "timefore", "--json",
        *llm_flags(fake_openai),
    )  # fmt: skip
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["type"] == "ForecastError" and "no model" in error["message"]
    assert any("foretab train" in s for s in error["suggestions"])
    assert any("--tool-model drift" in s for s in error["suggestions"])
    kinds = [b["messages"][0]["content"] for b in fake_openai.requests]
    assert not any("imputationThenPredictionTool" in k for k in kinds)


def test_record_then_replay_without_a_server(fake_openai, mini_duckdb, tmp_path) -> None:
    fake_openai.respond_with(scripted())
    transcript = tmp_path / "run.jsonl"
    args = ["ask", QUESTION, "--db", mini_duckdb, "--engine", "timefore", "--json",
            "--tool-model", "drift"]  # fmt: skip
    recorded = cli(*args, *llm_flags(fake_openai), "--llm-record", str(transcript))
    assert recorded.exit_code == 0, recorded.output
    fake_openai.close()  # nothing may reach the network now
    replayed = cli(*args, "--llm-model", "fake-model", "--llm-replay", str(transcript))
    assert replayed.exit_code == 0, replayed.output
    first, second = json.loads(recorded.stdout), json.loads(replayed.stdout)
    assert second["answer"] == first["answer"] and second["sql"] == first["sql"]
    sources = {s["source"] for s in second["steps"] if s["stage"] == "llm"}
    assert sources == {"replay"}


def test_a_reply_cut_at_max_tokens_says_so(fake_openai, mini_duckdb) -> None:
    fake_openai.respond_with(
        lambda body: Scripted(
            body=completion_body("<think>Let me think about", finish_reason="length")
        )
    )
    llm = OpenAIProvider(fake_openai.options())
    engine = build_engine(mini_duckdb, "timefore", llm=llm, tool_model="drift")
    try:
        with pytest.raises(Exception, match="cut off at max_tokens") as caught:
            engine.ask(QUESTION)
    finally:
        engine.close()
    assert type(caught.value).__name__ == "AgentError"
    assert len(caught.value.steps) == 5  # three calls, two retries, all in the report


@pytest.mark.parametrize(
    ("content", "why"),
    [(None, "the reply was empty"), ("I'm sorry, I cannot help with that.", "a refusal")],
)
def test_empty_replies_and_refusals_end_in_a_clear_error(
    fake_openai, mini_duckdb, content, why
) -> None:
    fake_openai.respond_with(lambda body: Scripted(body=completion_body(content)))
    result = cli(
        "ask", QUESTION, "--db", mini_duckdb, "--engine", "timefore", "--json",
        *llm_flags(fake_openai),
    )  # fmt: skip
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["type"] == "AgentError" and why in error["message"]
    assert "--engine rules" in error["message"]
    assert len(fake_openai.requests) == 3


def test_tool_arguments_sent_as_a_json_object_are_accepted(fake_openai, mini_duckdb) -> None:
    model = scripted()

    def respond(body):
        messages = body["messages"]
        if "sqlQueryTool" in messages[0]["content"] and messages[-1]["role"] != "tool":
            raw = completion_body(None, [("sqlQueryTool", "{}")])
            function = raw["choices"][0]["message"]["tool_calls"][0]["function"]
            function["arguments"] = {"sql_statement": GOOD_SQL}  # an object, not a string
            return Scripted(body=raw)
        return model(body)

    fake_openai.respond_with(respond)
    llm = OpenAIProvider(fake_openai.options())
    with build_engine(mini_duckdb, "timefore", llm=llm, tool_model="drift") as engine:
        answer = engine.ask(QUESTION)
    tools = [s for s in answer.trace.steps if s.stage == "tool" and s.tool == "sqlQueryTool"]
    assert [t.ok for t in tools] == [True]
    assert json.loads(tools[0].arguments) == {"sql_statement": GOOD_SQL}
