"""Questions written by someone other than the parser's author, checked plan by plan.

The set mixes every family with paraphrases, lower case and partial place names. At least
90% must parse to exactly the expected plan (the issue's bar for unseen phrasings); the
failures are printed so a regression names its question.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foretab.engine import Engine
from foretab.errors import ForetabError

CASES = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "questions" / "lead_paraphrases.json").read_text()
)


def describe(engine: Engine, question: str) -> dict[str, object]:
    plan = engine.parse(question)
    return {
        "projects": [[p.outer, p.inner, p.name] for p in plan.entities],
        "first": plan.window.first.iso,
        "last": plan.window.last.iso,
        "aggregate": plan.aggregate.value,
        "task": plan.task.value,
        "comparison": plan.comparison.value,
        "measure": plan.measure.value,
    }


@pytest.mark.slow
def test_unseen_paraphrases_parse(corpus_db: str) -> None:
    failures = []
    with Engine.open(corpus_db, future="oracle") as engine:
        for case in CASES:
            want = {k: v for k, v in case.items() if k != "question"}
            try:
                got = describe(engine, case["question"])
            except ForetabError as exc:
                got = {"error": exc.message}
            if got != want:
                diff = (
                    {k: (got.get(k), want[k]) for k in want if got.get(k) != want[k]}
                    if "error" not in got
                    else got
                )
                failures.append(f"{case['question']}\n    {diff}")
    accuracy = 1 - len(failures) / len(CASES)
    print(f"paraphrase accuracy {accuracy:.1%} ({len(CASES) - len(failures)}/{len(CASES)})")
    print("\n".join(failures))
    assert accuracy >= 0.9, "\n".join(failures)
