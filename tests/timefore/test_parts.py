"""The TimeFore parts without a server: reply parsing, tool validation, captions, prompts."""

from __future__ import annotations

import json

import pytest

from foretab.core.catalog import CatalogEntry
from foretab.core.months import Month
from foretab.core.plan import Task
from foretab.llm import LLMOptions, OpenAIProvider, ToolCall
from foretab.llm.errors import LLMReplyError
from foretab.timefore.analyzer import QuestionTypeClassifier
from foretab.timefore.captions import CaptionSearch
from foretab.timefore.examples import pick, shipped_examples
from foretab.timefore.extract import (
    extract_answer,
    extract_captions,
    extract_sql,
    looks_like_refusal,
)
from foretab.timefore.forecaster import parse_data
from foretab.timefore.prompts import dates, render
from foretab.timefore.session import DEFAULT_MAX_CALLS, AgentSession
from foretab.timefore.sql_agent import tool_sql

SQL = "SELECT project_name, month, price FROM t WHERE project_name = 'Bao''an Court'"


@pytest.mark.parametrize(
    "reply",
    [
        json.dumps({"sql": SQL + ";"}),
        '```json\n{"sql": "' + SQL.replace("'", "'") + ';"}\n```',
        '{"sql": "' + SQL + ';"}\nThis query selects the prices. Let me know!',
        '"sql": "' + SQL + ';"',
        "Sure! Here is the query:\n```sql\n" + SQL + ";\n```\nIt reads the table.",
        "<think>I should use a SELECT.</think>\n" + SQL + ";",
        "The statement is " + SQL + "; it is valid.",
    ],
)
def test_sql_is_found_in_prose_fences_and_json(reply: str) -> None:
    assert extract_sql(reply).rstrip(";") == SQL


@pytest.mark.parametrize("reply", ["", "   ", "I cannot help with that.", "DROP everything"])
def test_no_sql_is_none(reply: str) -> None:
    assert extract_sql(reply) is None


def test_refusal_is_recognised() -> None:
    assert looks_like_refusal("I'm unable to run SQL for you.")
    assert not looks_like_refusal("[[123.4]]")


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("<Answer>:[[14448.49]]", [[14448.49]]),
        ("[[14448.49]]\nExplanation: the lowest value in April.", [[14448.49]]),
        ('It will be about [["28,246"]] yuan', [[28246.0]]),
        (
            "[('Vanke Future Light',), ('Metropolitan Garden',)]",
            [["Vanke Future Light"], ["Metropolitan Garden"]],
        ),
        ("[['Increase']] because prices rise", [["Increase"]]),
        ('[["O\'Neill Bay"]]', [["O'Neill Bay"]]),
        ("['January 2022', 1.5]", [["January 2022"], [1.5]]),
        ("<think>[[1]]</think><Answer>: [['Decrease']]", [["Decrease"]]),
    ],
)
def test_answers_are_parsed_into_the_list_format(reply, expected) -> None:
    assert extract_answer(reply, ("<Answer>",)) == expected


@pytest.mark.parametrize("reply", ["", "no idea", "[]", "[[null]]", '{"a": 1}', "[[true]]"])
def test_unusable_answers_are_none(reply: str) -> None:
    assert extract_answer(reply) is None


def test_captions_from_lists_and_lines() -> None:
    text = "<Summary>:['Project Price Table for Bao'an District, Shenzhen, 2021']"
    assert extract_captions(text) == ["Project Price Table for Bao'an District, Shenzhen, 2021"]
    prose = (
        "The tables are:\n1. Project Price Table for Jiangning District, Nanjing, 2020\n"
        "2. Project Price Table for Jiangning District, Nanjing, 2021\nHope this helps."
    )
    assert extract_captions(prose) == [
        "Project Price Table for Jiangning District, Nanjing, 2020",
        "Project Price Table for Jiangning District, Nanjing, 2021",
    ]
    assert extract_captions("I don't know") is None


def _catalog() -> list[CatalogEntry]:
    places = [("Jiangning District", "Nanjing"), ("Gulou District", "Nanjing"),
              ("Bao'an District", "Shenzhen")]  # fmt: skip
    return [
        CatalogEntry(f"t_{i}_{y}", f"Project Price Table for {d}, {c}, {y}", c, d, y, 10)
        for i, (d, c) in enumerate(places)
        for y in (2020, 2021)
    ]


@pytest.mark.parametrize(
    ("caption", "method", "table"),
    [
        ("Project Price Table for Jiangning District, Nanjing, 2021", "exact", "t_0_2021"),
        ("project price table for jiangning district, nanjing, 2021.", "exact", "t_0_2021"),
        ("Jiangning, Nanjing, 2021", "bm25", "t_0_2021"),
        ("Project Price Table for Baoan District, Shenzhen, 2020", "bm25", "t_2_2020"),
        # A future year or an unknown district stays missing: never another table.
        ("Project Price Table for Jiangning District, Nanjing, 2022", "missing", None),
        ("Project Price Table for Xuanwu District, Nanjing, 2021", "missing", None),
        ("weather report", "missing", None),
    ],
)
def test_caption_search_exact_then_thresholded_bm25(caption, method, table) -> None:
    match = CaptionSearch(_catalog()).match(caption)
    assert match.method == method
    assert (match.table.table_name if match.table else None) == table


def test_sql_tool_arguments_are_checked() -> None:
    ok = ToolCall(id="1", name="sqlQueryTool", arguments=json.dumps({"sql_statement": "SELECT 1"}))
    assert tool_sql(ok) == "SELECT 1"
    assert tool_sql(ToolCall(id="1", name="sqlQueryTool", arguments='{"sql": "SELECT 2"}')) == (
        "SELECT 2"
    )
    for args, message in [
        ('{"sql_statement": 42}', "must be a string"),
        ('{"sql_statement": ["SELECT 1"]}', "must be a string"),
        ("{}", "needs the argument sql_statement"),
        ("[1, 2]", "JSON object"),
        ("SELECT 1", "not JSON"),
    ]:
        with pytest.raises(LLMReplyError, match=message):
            tool_sql(ToolCall(id="1", name="sqlQueryTool", arguments=args))
    with pytest.raises(LLMReplyError, match="no tool 'runSQL'"):
        tool_sql(ToolCall(id="1", name="runSQL", arguments="{}"))


def test_forecast_tool_data_is_validated() -> None:
    values = parse_data(["-"] * 20 + [1.0, "2,000.5", None, 4])
    assert values[:20] == [None] * 20 and values[20:] == [1.0, 2000.5, None, 4.0]
    assert parse_data(json.dumps([5.0] * 24)) == [5.0] * 24
    for data, message in [
        ([1.0] * 23, "has 23 values"),
        ([1.0] * 25, "has 25 values"),
        ({"a": 1}, "must be an array"),
        (["-"] * 24, "no price at all"),
        ([1.0] * 23 + ["abc"], "value 24 is 'abc'"),
        ([1.0] * 23 + [-5], "positive price"),
        ([1.0] * 23 + [True], "value 24"),
        ("not a list", "JSON array"),
    ]:
        with pytest.raises(LLMReplyError, match=message):
            parse_data(data)


def test_prompts_are_dated_for_the_reference_month() -> None:
    text = render("summary", Month(2023, 12), examples="", query="Q?")
    assert "2023-12-31" in text and "from January 2022 to December 2023" in text
    assert dates(Month(2021, 6))["current_date"] == "2021-06-30"
    assert dates(Month(2021, 6))["future_span"] == "July 2021 to June 2022"


def test_shipped_examples_follow_the_reference_month_and_pick_is_deterministic() -> None:
    examples = shipped_examples(Month(2023, 12))
    first = pick(examples)
    assert [e.question for e in first] == [e.question for e in pick(examples)]
    assert len(first) == 5 and len({e.family for e in first}) == 5
    assert all("2022" in e.captions[0] and "2023" in e.captions[-1] for e in first)
    reasoning = pick(examples, task=Task.REASONING)
    assert {e.task for e in reasoning} == {Task.REASONING}
    assert all(isinstance(e.answer[0][0], str) for e in reasoning)


def test_question_type_classifier_learns_the_shipped_types() -> None:
    examples = shipped_examples(Month(2021, 12))
    model = QuestionTypeClassifier([e.question for e in examples], [e.task for e in examples])
    assert model.predict("What was the price of X in Y District, Z last month?") is Task.HISTORY
    assert model.predict("Which of A and B in Y District, Z will see a bigger increase?") is (
        Task.REASONING
    )


def test_session_budget_default_and_explicit_cap() -> None:
    default = AgentSession(OpenAIProvider(LLMOptions(base_url="http://x/v1", model="m")))
    assert default.max_calls == DEFAULT_MAX_CALLS
    capped = OpenAIProvider(LLMOptions(base_url="http://x/v1", model="m", max_calls_per_question=5))
    assert AgentSession(capped).max_calls == 5


def test_python_literals_with_apostrophes_in_names() -> None:
    assert extract_answer("[['O'Neill Bay'], ['Bao'an Court']]") == [
        ["O'Neill Bay"],
        ["Bao'an Court"],
    ]


def test_text_answer_follows_the_question_language() -> None:
    from foretab.timefore.analyzer import answer_text

    assert answer_text([[1234.5]], "TimeFore", "What will...") == "The TimeFore answer is 1,234.50."
    assert (
        answer_text([["Increase"]], "TimeFore", "外滩花园下个月会涨吗？")
        == "TimeFore 的回答：Increase。"
    )
