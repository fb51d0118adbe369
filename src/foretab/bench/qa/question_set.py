"""Score the engine on a hand-written question set (``tests/fixtures/questions/analyst_en.json``).

Each item has a question and either an expected ``answer`` (list format, docs/design.md §4) or a
``refuse`` word that the error message must contain (the cause: "developer", "unknown",
"two", ...). Answers compare row by row with numbers to 2 decimals; ``ordered: false``
compares the rows as a multiset. A refusal for a question with an answer, an answer for a
question that must be refused, or a refusal naming another cause all count as wrong.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from foretab.errors import ForetabError, QuestionError

Cell = str | float


class SetItem(BaseModel):
    """One question of a set."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    family: str
    question: str
    answer: list[list[Cell]] | None = None
    ordered: bool = True
    refuse: str | None = None


@dataclass(frozen=True, slots=True)
class ItemResult:
    """How one question went: ``outcome`` is right / wrong / wrongly-refused / error."""

    item: SetItem
    outcome: str
    got: str


def load_set(path: Path) -> list[SetItem]:
    """Read a question set (a JSON list of items)."""
    return [SetItem.model_validate(x) for x in json.loads(path.read_text(encoding="utf-8"))]


def _cell(value: object) -> object:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int | float):
        return round(float(value) + 0.0, 2)
    return str(value).strip()


def same_answer(  # noqa: D103 - the rule is the module docstring's
    got: Sequence[Sequence[object]], want: Sequence[Sequence[object]], ordered: bool
) -> bool:
    g = [tuple(_cell(c) for c in row) for row in got]
    w = [tuple(_cell(c) for c in row) for row in want]
    return g == w if ordered else Counter(g) == Counter(w)


def score_item(item: SetItem, ask: Callable[[str], list[list[Cell]]]) -> ItemResult:
    """Ask one question and judge the answer or the refusal."""
    try:
        got = ask(item.question)
    except QuestionError as error:
        if item.refuse is None:
            return ItemResult(item, "wrongly-refused", error.message)
        ok = item.refuse.lower() in error.message.lower()
        return ItemResult(item, "right" if ok else "wrong-cause", error.message)
    except ForetabError as error:
        return ItemResult(item, "error", f"{type(error).__name__}: {error.message}")
    if item.refuse is not None:
        return ItemResult(item, "wrong", f"answered {got}")
    assert item.answer is not None
    ok = same_answer(got, item.answer, item.ordered)
    return ItemResult(item, "right" if ok else "wrong", json.dumps(got, ensure_ascii=False))


def miss_kind(result: ItemResult) -> str:
    """The issue-31 reading of one result: right, refused-wrongly, wrong-number or different-question.

    On exact data (past months, or the oracle future) a wrong answer is never a forecast's
    error: a same-shaped answer whose numbers differ is ``wrong-number``; any other wrong
    answer — another shape, other names picked, an answer where a refusal was due, a
    refusal naming another cause — answered a different question.
    """
    if result.outcome == "right":
        return "right"
    if result.outcome in ("wrongly-refused", "error"):
        return "refused-wrongly"
    want = result.item.answer
    if want is None or result.outcome == "wrong-cause":
        return "different-question"
    try:
        got = json.loads(result.got)
    except ValueError:
        return "different-question"
    numeric = [
        isinstance(g, int | float) and isinstance(w, int | float)
        for grow, wrow in zip(got, want, strict=False)
        for g, w in zip(grow, wrow, strict=False)
    ]
    same_shape = len(got) == len(want) and all(
        len(g) == len(w) for g, w in zip(got, want, strict=True)
    )
    strings_agree = all(
        _cell(g) == _cell(w)
        for grow, wrow in zip(got, want, strict=False)
        for g, w in zip(grow, wrow, strict=False)
        if not (isinstance(g, int | float) and isinstance(w, int | float))
    )
    if same_shape and any(numeric) and strings_agree:
        return "wrong-number"
    return "different-question"
