"""The operations issue 31 left open (``tests/fixtures/questions/compose_ops.json``).

22 questions, English and Chinese: a window's median, the units-weighted average price and
every project of a district as the subject (docs/design.md §4.1), with three refusals;
answers computed with pandas (``compose_ops_build.py``) before the engine read any of
them, scored on the oracle future like the blind set.

First contact (the commit of this file): 2 right (the two refusals), 5 answered as a
different question (every "every project of D" question answered with D's mean), 15
refused wrongly ('median', 'weighted' not read).

After the median, every project (ScopeOp.EACH) and the units-weighted price: 22 of 22.
The rules were written against this set, so that figure is not a blind one; the blind
set (analyst_compose) and the unit tests of each operation check them beside it.

``compose_ops_holdout.json``: 9 other wordings of the three operations, written after the
rules and scored once before any change. First contact: 7 right, 1 answered as a different
question ("Prices of each of the projects in Yantian": the district's mean), 1 refused
("volume-weighted" read as an unknown name). After "each of the projects" was read as
every project and "weighted" / "volume" became words the linker skips (never filler: a
bare "weighted" is still refused): 9 of 9 — tuned on, so no longer a hold-out figure.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from foretab.bench.qa.question_set import load_set, miss_kind, score_item
from foretab.engine import Engine

SET = Path(__file__).resolve().parents[1] / "fixtures" / "questions" / "compose_ops.json"
HOLDOUT = SET.with_name("compose_ops_holdout.json")
FLOOR = 22  # right answers or refusals; raised as the planner improves, never lowered
DIFFERENT_CEILING = 0  # answered as a different question (shape or number); only lowered


@pytest.mark.slow  # the real corpus end to end; CI runs it
def test_compose_ops_set(corpus_db: str) -> None:
    items = load_set(SET)
    with Engine.open(corpus_db, future="oracle") as engine:
        results = [score_item(item, lambda q: engine.ask(q).answer) for item in items]
    kinds = Counter(miss_kind(r) for r in results)
    misses = [(r.item.question, r.got) for r in results if r.outcome != "right"]
    assert kinds["right"] >= FLOOR, misses
    assert kinds["different-question"] + kinds["wrong-number"] <= DIFFERENT_CEILING, misses


@pytest.mark.slow
def test_compose_ops_holdout(corpus_db: str) -> None:
    items = load_set(HOLDOUT)
    with Engine.open(corpus_db, future="oracle") as engine:
        results = [score_item(item, lambda q: engine.ask(q).answer) for item in items]
    kinds = Counter(miss_kind(r) for r in results)
    misses = [(r.item.question, r.got) for r in results if r.outcome != "right"]
    assert kinds["right"] >= 9, misses
    assert kinds["different-question"] + kinds["wrong-number"] == 0, misses
