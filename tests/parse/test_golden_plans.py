"""A hand-written question set (tests/fixtures/questions) parses to the expected Plans."""

from __future__ import annotations

from pathlib import Path

import pytest

from foretab import errors
from foretab.core.months import Month
from foretab.parse.entities import EntityIndex
from foretab.parse.parser import parse_question

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "questions" / "plans_2021_12.tsv"
REFERENCE = Month(2021, 12)


def _rows() -> list[list[str]]:
    lines = GOLDEN.read_text(encoding="utf-8").splitlines()
    return [line.split("\t") for line in lines if line.strip() and not line.startswith("#")]


ROWS = _rows()


def test_golden_set_is_large_and_covers_every_family() -> None:
    assert len(ROWS) >= 60
    plans = [row for row in ROWS if len(row) == 8]
    assert {row[5] for row in plans} == {"forecast", "reasoning", "history"}
    assert {row[6] for row in plans} >= {
        "none", "vs_current", "which_rise", "which_fall", "rises_most", "falls_most",
        "highest", "lowest",
    }  # fmt: skip
    assert {row[4] for row in plans} == {"value", "mean", "max", "min", "each"}
    assert sum(1 for row in ROWS if len(row) == 2) >= 2


@pytest.mark.parametrize("row", ROWS, ids=[row[0][:70] for row in ROWS])
def test_golden_question(row: list[str], corpus_index: EntityIndex) -> None:
    question = row[0]
    if len(row) == 2:
        error = getattr(errors, row[1].lstrip("!"))
        with pytest.raises(error):
            parse_question(question, corpus_index, REFERENCE)
        return
    projects, first, last, aggregate, task, comparison, measure = row[1:]
    plan = parse_question(question, corpus_index, REFERENCE)
    assert [p.name for p in plan.entities] == projects.split(";")
    assert (plan.window.first.iso, plan.window.last.iso) == (first, last)
    # A question without a time expression gets a default the plan states (docs/design.md §3).
    assert (plan.window.expression and plan.window.expression in question) or plan.assumption
    assert (plan.aggregate.value, plan.task.value) == (aggregate, task)
    assert (plan.comparison.value, plan.measure.value) == (comparison, measure)
