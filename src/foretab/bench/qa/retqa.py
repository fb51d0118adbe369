"""RETQA historical questions (``../shared/data/retqa``) scored by the docs/design.md §5 rule.

An answer is right when its project names equal the gold names as a set (a project
matches by its Chinese or English name) and its numbers equal the gold numbers as a
multiset, to 2 decimals. Month labels are not compared, and a name that labels a row of
numbers (``[["A", 123.4]]``) is a label, not an answer item. A refusal is wrong.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from foretab.errors import ForetabError

Cell = str | float
_MONTH_LABEL = re.compile(
    r"^\d{4}年\d{1,2}月$|^\d{4}-\d{2}$|^(?:January|February|March|April|May|June|July|August"
    r"|September|October|November|December) \d{4}$"
)


class RetqaItem(BaseModel):
    """One RETQA question with its gold rows (recomputed on the shared corpus)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str
    question: str
    intent: str
    gold: list[list[str | float | int | None]]
    retqa_agrees: bool = True


@dataclass(frozen=True, slots=True)
class RetqaResult:
    """How one question went."""

    item: RetqaItem
    right: bool
    got: str


def load_retqa(path: Path) -> list[RetqaItem]:
    """Read a RETQA split (JSON lines)."""
    with path.open(encoding="utf-8") as handle:
        return [RetqaItem.model_validate_json(line) for line in handle if line.strip()]


def _items(rows: Iterable[Iterable[object]], alias: Callable[[str], str]) -> tuple[set, Counter]:
    names: set[str] = set()
    numbers: Counter[float] = Counter()
    for row in rows:
        cells = [c for c in row if c is not None]
        has_number = any(isinstance(c, int | float) and not isinstance(c, bool) for c in cells)
        for cell in cells:
            if isinstance(cell, int | float) and not isinstance(cell, bool):
                numbers[round(float(cell) + 0.0, 2)] += 1
            elif not has_number and not _MONTH_LABEL.match(str(cell).strip()):
                names.add(alias(str(cell).strip()))
    return names, numbers


def same(
    got: list[list[Cell]], gold: list[list[object]], alias: Callable[[str], str] = str
) -> bool:
    """The docs/design.md §5 rule; ``alias`` maps a project name to one canonical spelling."""
    return _items(got, alias) == _items(gold, alias)


def score(
    items: Iterable[RetqaItem],
    ask: Callable[[str], list[list[Cell]]],
    alias: Callable[[str], str] = str,
) -> list[RetqaResult]:
    """Ask every question; a ``ForetabError`` counts as a wrong answer."""
    results = []
    for item in items:
        try:
            got = ask(item.question)
        except ForetabError as error:
            results.append(RetqaResult(item, False, f"{type(error).__name__}: {error.message}"))
            continue
        ok = same(got, item.gold, alias)
        results.append(RetqaResult(item, ok, json.dumps(got, ensure_ascii=False)))
    return results


def by_intent(results: Iterable[RetqaResult]) -> dict[str, tuple[int, int]]:
    """(right, total) per intent, plus ``all``."""
    table: dict[str, list[int]] = {}
    for result in results:
        for key in (result.item.intent, "all"):
            counts = table.setdefault(key, [0, 0])
            counts[0] += int(result.right)
            counts[1] += 1
    return {key: (right, total) for key, (right, total) in table.items()}
