"""What ``Engine.ask`` returns: the answer, its text, the plan and a trace of every step."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from foretab.months import Month
from foretab.parse.plan import Plan, ProjectRef, Task

Cell = str | float
Series = Mapping[ProjectRef, Mapping[Month, float]]


@dataclass(frozen=True, slots=True)
class Trace:
    """Every step's inputs and outputs, for people and the benchmark.

    ``future_source`` is ``model:<name>``, ``oracle`` (read from the future store: the
    evaluation-only GH+GF ablation) or ``none`` (last observed price, GH-NF).
    """

    tables: tuple[str, ...]
    retrieval: tuple[tuple[str, str], ...]  # (requested caption, exact|bm25|missing|given)
    sql: str
    params: tuple[object, ...]
    history_rows: int
    future_source: str
    timings: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True)
class Answer:
    """An answer in the ODTQA-FoRe list format plus a one-sentence text."""

    question: str
    answer: list[list[Cell]]
    text: str
    task: Task
    plan: Plan
    trace: Trace
    history: Series
    forecast: Series

    def to_dict(self) -> dict[str, Any]:
        """The ``foretab ask --json`` object."""
        plan = self.plan
        return {
            "question": self.question,
            "task": self.task.value,
            "answer": self.answer,
            "text": self.text,
            "plan": {
                "reference_month": plan.reference_month.iso,
                "projects": [
                    {"city": p.city, "district": p.district, "project": p.project}
                    for p in plan.projects
                ],
                "window": {
                    "first": plan.window.first.iso,
                    "last": plan.window.last.iso,
                    "expression": plan.window.expression,
                },
                "aggregate": plan.aggregate.value,
                "task": plan.task.value,
                "comparison": plan.comparison.value,
                "measure": plan.measure.value,
            },
            "tables": list(self.trace.tables),
            "retrieval": [{"caption": c, "method": m} for c, m in self.trace.retrieval],
            "sql": self.trace.sql,
            "params": [str(p) for p in self.trace.params],
            "history": _series_json(self.history),
            "forecast": _series_json(self.forecast),
            "future_source": self.trace.future_source,
            "timings": {k: round(v * 1000, 3) for k, v in self.trace.timings.items()},
        }


def _series_json(series: Series) -> list[dict[str, Any]]:
    return [
        {
            "project": ref.project,
            "district": ref.district,
            "city": ref.city,
            "values": [[m.label, round(v, 2)] for m, v in sorted(values.items())],
        }
        for ref, values in series.items()
    ]
