"""Code and column extraction from messy replies; typed answers in DataBench's format."""

from __future__ import annotations

import pytest

from foretab.tableqa.answer import AnswerType, normalise
from foretab.tableqa.extract import extract_code, parse_column_list


@pytest.mark.parametrize(
    "reply",
    [
        "```python\ndef answer(df):\n    return 1\n```",
        "Sure.\n```py\nimport pandas as pd\n\ndef answer(df):\n    return 1\n```\nDone.",
        "```\ndef answer(df):\n    return 1\n```",
        "First a helper:\n```python\nx = 2\n```\nThen:\n```python\ndef answer(df):\n    return 1\n```",
        "def answer(df):\n    return 1\n\nThis function returns one.",
        "Answer below\nimport math\ndef answer(df):\n    return 1\nHope it helps!",
        "```python\ndef answer(df):\n    return 1\n",  # unclosed fence
    ],
)
def test_extract_code_variants(reply) -> None:
    code = extract_code(reply)
    assert code is not None and "def answer(df):" in code
    namespace: dict[str, object] = {}
    exec(compile(code, "t", "exec"), namespace)  # trusted test input
    assert namespace["answer"](None) == 1


def test_no_code_is_none() -> None:
    assert extract_code("I cannot answer that.") is None


def test_column_lists() -> None:
    known = ("Age", "Monthly Income", "Dept")
    assert parse_column_list("['Age', 'monthly income']", known) == ["Age", "Monthly Income"]
    assert parse_column_list('Columns: ["Dept", "Zzz"] are needed', known) == ["Dept"]
    assert parse_column_list("[Zzz]", known) is None
    assert parse_column_list("no list here", known) is None


@pytest.mark.parametrize(
    ("value", "expected", "kind", "text"),
    [
        (True, None, AnswerType.BOOLEAN, "True"),
        (125.0, None, AnswerType.NUMBER, "125.0"),
        (3, None, AnswerType.NUMBER, "3"),
        ("Sales", None, AnswerType.CATEGORY, "Sales"),
        ([1, 2.5], None, AnswerType.LIST_NUMBER, "[1, 2.5]"),
        (["a", "b"], None, AnswerType.LIST_CATEGORY, "['a', 'b']"),
        ([], None, AnswerType.LIST_CATEGORY, "[]"),
        (["x"], AnswerType.CATEGORY, AnswerType.CATEGORY, "x"),
        ("x", AnswerType.LIST_CATEGORY, AnswerType.LIST_CATEGORY, "['x']"),
        ({"k": 4}, None, AnswerType.NUMBER, "4"),
        (None, None, AnswerType.CATEGORY, "None"),
    ],
)
def test_normalise(value, expected, kind, text) -> None:
    answer = normalise(value, expected)
    assert answer.type is kind and answer.text == text
