"""A scripted LLM for the fake server: recognises each TimeFore prompt and answers it.

It plays a model that follows the prompts: captions from a table, SQL from a table (sent
through ``sqlQueryTool`` first, then as the final JSON), the 24 values for the forecasting
tool parsed from the prompt's own history, and an analyzer answer from a function. Tests
override single replies to exercise the error paths.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.llm.fake_openai import Scripted, completion_body

MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August",
    "September", "October", "November", "December",
]  # fmt: skip


def _query(text: str) -> str:
    match = re.findall(r"<Query>:\s*(.*)", text)
    return match[-1].strip() if match else ""


def kind(body: dict[str, Any]) -> str:
    """Which agent sent this request."""
    first = body["messages"][0]["content"] or ""
    if "<Summary>" in first:
        return "captions"
    if "sqlQueryTool" in first:
        return "sql"
    if "imputationThenPredictionTool" in first:
        return "forecaster"
    if "<Normalized Answer>" in first:
        return "normalise"
    if "Answer the <Query> from the <History Price>" in first:
        return "vanilla"
    return "analyzer"


def history_values(text: str, first: tuple[int, int]) -> dict[str, list[object]]:
    """The prompt's last ``<History Price>`` as 24 values per project ('-' for gaps)."""
    raw = re.findall(r"<History Price>:\s*(?:<data>)?(\[.*\])", text)[-1]
    rows = ast.literal_eval(raw)
    out: dict[str, list[object]] = {}
    year0, month0 = first
    for row in rows:
        project, label, value = row if len(row) == 3 else ("single", *row)
        name, year = label.split()
        k = (int(year) - year0) * 12 + MONTHS.index(name) + 1 - month0
        values = out.setdefault(project, ["-"] * 24)
        if 0 <= k < 24:
            values[k] = value
    return out


@dataclass
class ScriptedModel:
    """Answers TimeFore prompts; ``captions`` / ``sql`` map a question to its gold reply."""

    captions: Callable[[str], list[str]]
    sql: Callable[[str], str]
    answer: Callable[[str], str] = lambda q: "[[1.0]]"
    first_month: tuple[int, int] = (2020, 1)
    seen: list[str] = field(default_factory=list)

    def __call__(self, body: dict[str, Any]) -> Scripted | str:
        agent = kind(body)
        self.seen.append(agent)
        messages = body["messages"]
        last = messages[-1]
        text = "\n".join(m.get("content") or "" for m in messages)
        question = _query(messages[1]["content"] if len(messages) > 1 else text)
        if agent == "captions":
            return repr(self.captions(_query(text)))
        if agent == "sql":
            if last["role"] == "tool":
                return json.dumps({"sql": self.sql(question)})
            return self._tool("sqlQueryTool", {"sql_statement": self.sql(question)})
        if agent == "forecaster":
            if last["role"] == "tool" and not (last["content"] or "").startswith("Error"):
                return "<Future Price>: " + (last["content"] or "")
            data = history_values(messages[1]["content"], self.first_month)
            calls = [
                ("imputationThenPredictionTool", {"data": values, "project": project})
                for project, values in data.items()
            ]
            return Scripted(body=completion_body(None, calls))
        if agent == "normalise":
            predicted = re.findall(r"<Predicted Answer>:\s*(.*)", text)[-1]
            return predicted
        return self.answer(_query(text))

    @staticmethod
    def _tool(name: str, args: dict[str, Any]) -> Scripted:
        return Scripted(body=completion_body(None, [(name, args)]))
