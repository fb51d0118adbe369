"""One QA pair of the benchmark dataset and its JSON Lines form."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from foretab.core.plan import EntityRef
from foretab.errors import ForetabError

AnswerRows = list[list[str | float]]


def family_of(item: QAItem) -> str:
    """The family an item is reported under: its own, or the classic task's."""
    return item.family or f"odtqa {item.task}"


class DatasetError(ForetabError):
    """A benchmark dataset file is missing or malformed."""


@dataclass(frozen=True, slots=True)
class QAItem:
    """One ODTQA-FoRe-style question with its gold answer and gold SQL.

    ``history_sql`` runs on the history store, ``future_sql`` on the future store (both with
    plain table names); ``answer_sql`` runs where the history store is attached as
    ``history`` and the future store as ``future`` (the builder's own trusted connection).
    ``tables`` are the golden history table names, ``table_captions`` their captions.
    """

    id: str
    split: str
    template_id: str
    task: str
    question: str
    projects: tuple[EntityRef, ...]
    months: tuple[str, ...]
    answer: AnswerRows
    history_sql: str
    future_sql: str
    answer_sql: str
    table_captions: tuple[str, ...]
    tables: tuple[str, ...]
    expression: str
    aggregate: str
    comparison: str
    measure: str
    reference_month: str
    #: the issue-10 family (``foretab.bench.qa.family_templates``); empty for the classic templates
    family: str = ""
    language: str = "en"

    def to_json(self) -> str:
        """One JSON Lines row (a classic item's row has no family or language keys)."""
        extra = {"family": self.family, "language": self.language} if self.family else {}
        return json.dumps(
            {
                "id": self.id,
                "split": self.split,
                "template_id": self.template_id,
                "task": self.task,
                "question": self.question,
                "projects": [
                    {"city": p.outer, "district": p.inner, "project": p.name} for p in self.projects
                ],
                "months": list(self.months),
                "answer": self.answer,
                "history_sql": self.history_sql,
                "future_sql": self.future_sql,
                "answer_sql": self.answer_sql,
                "table_captions": list(self.table_captions),
                "tables": list(self.tables),
                "expression": self.expression,
                "aggregate": self.aggregate,
                "comparison": self.comparison,
                "measure": self.measure,
                "reference_month": self.reference_month,
                **extra,
            },
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, line: str) -> QAItem:
        """Parse one JSON Lines row written by ``to_json``."""
        data = json.loads(line)
        return cls(
            id=str(data["id"]),
            split=str(data["split"]),
            template_id=str(data["template_id"]),
            task=str(data["task"]),
            question=str(data["question"]),
            projects=tuple(
                EntityRef(str(p["city"]), str(p["district"]), str(p["project"]))
                for p in data["projects"]
            ),
            months=tuple(str(m) for m in data["months"]),
            answer=[list(row) for row in data["answer"]],
            history_sql=str(data["history_sql"]),
            future_sql=str(data["future_sql"]),
            answer_sql=str(data["answer_sql"]),
            table_captions=tuple(str(c) for c in data["table_captions"]),
            tables=tuple(str(t) for t in data.get("tables", ())),
            expression=str(data.get("expression", "")),
            aggregate=str(data.get("aggregate", "")),
            comparison=str(data.get("comparison", "none")),
            measure=str(data.get("measure", "absolute")),
            reference_month=str(data.get("reference_month", "")),
            family=str(data.get("family", "")),
            language=str(data.get("language", "en")),
        )


def write_items(path: Path, items: Iterable[QAItem]) -> int:
    """Write items as JSON Lines; returns how many."""
    count = 0
    with path.open("w", encoding="utf-8") as handle:
        for item in items:
            handle.write(item.to_json() + "\n")
            count += 1
    return count


def read_items(path: str | Path) -> list[QAItem]:
    """Read a dataset split written by ``foretab bench build``."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(
            f"Dataset file {path} not found. Build one with "
            "`foretab bench build --db DB --out DIR` and pass DIR/test.jsonl."
        )
    return list(_parse_lines(path))


def _parse_lines(path: Path) -> Iterator[QAItem]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield QAItem.from_json(line)
            except (KeyError, TypeError, ValueError) as exc:
                raise DatasetError(
                    f"{path}:{number} is not a foretab QA item ({exc!r}); rebuild the "
                    "dataset with `foretab bench build`."
                ) from exc
