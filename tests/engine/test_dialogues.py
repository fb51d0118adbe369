"""The scripted dialogues (``tests/fixtures/questions/dialogues.json``, issue 25).

51 conversations, 34 English and 17 Chinese, 3–6 turns each (170 turns): every slot
(subject, measure, operation, time) carried over and replaced, clarify chains, refusals.
Answers computed with pandas from the shared corpus by ``dialogues_build.py``, committed
before any follow-up rule existed; scored on the oracle future (docs/design.md §5), so a
wrong answer is a wrong resolution, never a forecaster's error.

First contact (the first working resolver, before any fix): 154 turns right, 7 answered
differently (all but one after a refusal the thread went on from), 9 refused wrongly
(换成销量 / 换成最低 read as an unknown name; "compared with last year" of a district's
mean; one 2022 mean the oracle cannot answer because the project has 6 of 2022's months
— the same question asked alone fails the same way — so that turn's gold was moved to
January 2022); 41 of 51 dialogues right throughout. Final: 170 of 170, 51 of 51.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foretab.bench.qa.question_set import same_answer
from foretab.engine import Engine
from foretab.errors import QuestionError

SET = Path(__file__).resolve().parents[1] / "fixtures" / "questions" / "dialogues.json"


def _turn_outcome(talk, turn: dict) -> str:
    try:
        got = talk.ask(turn["say"])
    except QuestionError as error:
        if "refuse" in turn and turn["refuse"].lower() in error.message.lower():
            return "right"
        return f"refused: {error.message}"
    if got.clarify is not None:
        choices = got.clarify.questions
        ok = turn.get("clarify") == len(choices) and len(set(choices)) == len(choices)
        return "right" if ok else f"clarify {choices}"
    if "answer" not in turn:
        return f"answered {got.answer.answer} ({got.canonical})"
    if same_answer(got.answer.answer, turn["answer"], turn["ordered"]):
        return "right"
    return f"answered {got.answer.answer} ({got.canonical})"


def test_the_set_covers_what_the_issue_asks() -> None:
    dialogues = json.loads(SET.read_text(encoding="utf-8"))
    assert len(dialogues) >= 40
    assert {d["language"] for d in dialogues} == {"en", "zh"}
    assert all(3 <= len(d["turns"]) <= 6 for d in dialogues)
    for side in ("carried", "replaced"):
        named = {s for d in dialogues for s in d["slots"].get(side, [])}
        assert named >= {"subject", "measure", "operation", "time"}, side
    kinds = {k for d in dialogues for t in d["turns"] for k in t if k != "say"}
    assert {"answer", "clarify", "refuse"} <= kinds


@pytest.mark.slow  # the real corpus end to end (~10 s); CI runs it
def test_dialogues(corpus_db: str) -> None:
    dialogues = json.loads(SET.read_text(encoding="utf-8"))
    misses = []
    with Engine.open(corpus_db, future="oracle") as engine:
        for dialogue in dialogues:
            talk = engine.conversation()
            for number, turn in enumerate(dialogue["turns"], 1):
                outcome = _turn_outcome(talk, turn)
                if outcome != "right":
                    misses.append((dialogue["name"], number, turn["say"], outcome))
    assert not misses, misses
