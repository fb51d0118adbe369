"""The blind English analyst set (``tests/fixtures/questions/analyst_en.json``) on the real corpus.

Its answers were computed with pandas before the rules it tests were written; the two
questions it still misses ask about months the oracle has no value for (Xinghe Dandi in
February 2022), which the engine reports as a ForecastError instead of guessing.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from foretab.bench.qa.question_set import load_set, score_item
from foretab.engine import Engine

SET = Path(__file__).resolve().parents[1] / "fixtures" / "questions" / "analyst_en.json"


@pytest.mark.slow  # the real corpus end to end (ingest ~4 s); CI runs it
def test_analyst_set(corpus_db: str) -> None:
    items = load_set(SET)
    assert len(items) >= 60 and sum(1 for i in items if i.refuse) >= 10
    with Engine.open(corpus_db, future="oracle") as engine:
        results = [score_item(item, lambda q: engine.ask(q).answer) for item in items]
    outcomes = Counter(r.outcome for r in results)
    wrong = [(r.item.question, r.got) for r in results if r.outcome not in ("right", "error")]
    assert not wrong, wrong
    assert outcomes["right"] >= 68, outcomes
