"""The DataBench benchmark (SemEval-2025 Task 8 test set) run through ``TableQA``.

Reads ``../shared/data/databench`` (``qa.jsonl`` and ``tables/{dataset}/{all,sample}.parquet``),
answers each question with the chosen pipeline, and scores the submission strings with the
official rules (``foretab.bench.tableqa.score``). A question whose table is missing (the
full ``067_TripAdvisor`` table; every ``068_WorldBank_Awards`` table) is scored as wrong and
counted in ``skipped``.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from foretab.bench.tableqa.score import SEMANTICS, compare
from foretab.errors import ForetabError

if TYPE_CHECKING:
    import pandas as pd

    from foretab.tableqa import TableQA


class DatabenchError(ForetabError):
    """The DataBench folder or a run file is missing or malformed."""


@dataclass(frozen=True, slots=True)
class DatabenchQuestion:
    """One line of ``qa.jsonl``."""

    id: int
    dataset: str
    question: str
    type: str
    answer: str
    sample_answer: str
    tables: tuple[str, ...]

    def gold(self, lite: bool) -> str:
        return self.sample_answer if lite else self.answer


@dataclass(frozen=True, slots=True)
class DatabenchRow:
    """The outcome of one question."""

    id: int
    dataset: str
    type: str
    question: str
    gold: str
    predicted: str | None
    predicted_type: str | None
    correct: bool
    skipped: bool
    error: str | None
    code: str | None
    attempts: int
    llm_calls: int
    tokens: int
    seconds: float


@dataclass(frozen=True, slots=True)
class DatabenchReport:
    """A whole run: rows plus the figures docs/tableqa.md and ``bench report`` print."""

    pipeline: str
    lite: bool
    model: str
    rows: tuple[DatabenchRow, ...]
    wall_s: float

    @property
    def n(self) -> int:
        return len(self.rows)

    @property
    def correct(self) -> int:
        return sum(r.correct for r in self.rows)

    @property
    def accuracy(self) -> float:
        return 100.0 * self.correct / self.n if self.n else 0.0

    def by_type(self) -> dict[str, tuple[int, int]]:
        """``{type: (correct, total)}`` in DataBench's type order."""
        totals = Counter(r.type for r in self.rows)
        right = Counter(r.type for r in self.rows if r.correct)
        return {t: (right[t], totals[t]) for t in SEMANTICS if totals[t]}

    def to_dict(self) -> dict[str, object]:
        skipped = sum(r.skipped for r in self.rows)
        answerable = self.n - skipped
        return {
            "benchmark": "databench",
            "task": "lite" if self.lite else "full",
            "pipeline": self.pipeline,
            "model": self.model,
            "n": self.n,
            "correct": self.correct,
            "accuracy": round(self.accuracy, 2),
            "skipped_no_table": skipped,
            "accuracy_answerable": round(100.0 * self.correct / answerable, 2)
            if answerable
            else 0.0,
            "by_type": {
                t: {"correct": c, "n": n, "accuracy": round(100.0 * c / n, 2)}
                for t, (c, n) in self.by_type().items()
            },
            "failed_no_answer": sum(r.predicted is None and not r.skipped for r in self.rows),
            "llm_calls": sum(r.llm_calls for r in self.rows),
            "tokens": sum(r.tokens for r in self.rows),
            "seconds": round(self.wall_s, 2),
            "rows": [asdict(r) for r in self.rows],
        }


def load_questions(data_dir: str | Path) -> list[DatabenchQuestion]:
    """Every question of ``qa.jsonl``, or a clear error naming the problem."""
    path = Path(data_dir) / "qa.jsonl"
    if not path.is_file():
        raise DatabenchError(
            f"{str(path)!r} not found; pass the DataBench folder with --data "
            "(e.g. --data ../shared/data/databench)"
        )
    questions = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            questions.append(
                DatabenchQuestion(
                    id=int(raw["id"]),
                    dataset=str(raw["dataset"]),
                    question=str(raw["question"]),
                    type=str(raw["type"]),
                    answer=str(raw["answer"]),
                    sample_answer=str(raw["sample_answer"]),
                    tables=tuple(raw.get("tables", ("all", "sample"))),
                )
            )
        except (ValueError, KeyError, TypeError) as error:
            raise DatabenchError(
                f"{str(path)!r} line {number} is not a DataBench question: {error}"
            ) from None
    return questions


class _Tables:
    """Parquet tables read once per dataset, shared by the worker threads."""

    def __init__(self, data_dir: Path, lite: bool) -> None:
        self.data_dir = data_dir
        self.kind = "sample" if lite else "all"
        self._cache: dict[str, pd.DataFrame | None] = {}
        self._lock = threading.Lock()

    def get(self, dataset: str) -> pd.DataFrame | None:
        import pandas as pd

        with self._lock:
            if dataset not in self._cache:
                path = self.data_dir / "tables" / dataset / f"{self.kind}.parquet"
                self._cache[dataset] = pd.read_parquet(path) if path.is_file() else None
            return self._cache[dataset]


def run_databench(
    data_dir: str | Path,
    qa: TableQA,
    *,
    lite: bool = False,
    limit: int | None = None,
    ids: Collection[int] | None = None,
    workers: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> DatabenchReport:
    """Answer and score the questions with ``ids`` (all by default), the first ``limit``."""
    data_dir = Path(data_dir)
    questions = load_questions(data_dir)
    if ids is not None:
        wanted = set(ids)
        questions = [q for q in questions if q.id in wanted]
    questions = questions[: limit if limit else None]
    tables = _Tables(data_dir, lite)
    started = time.perf_counter()
    done = 0
    lock = threading.Lock()

    def one(question: DatabenchQuestion) -> DatabenchRow:
        nonlocal done
        row = _answer(qa, question, tables, lite)
        with lock:
            done += 1
            if progress is not None:
                progress(done, len(questions))
        return row

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        rows = tuple(pool.map(one, questions))
    return DatabenchReport(
        pipeline=qa.pipeline.value,
        lite=lite,
        model=qa.llm.model,
        rows=rows,
        wall_s=time.perf_counter() - started,
    )


def _answer(qa: TableQA, question: DatabenchQuestion, tables: _Tables, lite: bool) -> DatabenchRow:
    gold = question.gold(lite)
    df = tables.get(question.dataset)
    if df is None:
        return DatabenchRow(
            id=question.id, dataset=question.dataset, type=question.type, question=question.question,
            gold=gold, predicted=None, predicted_type=None, correct=False, skipped=True,
            error=f"no {tables.kind} table for {question.dataset} in the DataBench folder",
            code=None, attempts=0, llm_calls=0, tokens=0, seconds=0.0,
        )  # fmt: skip
    started = time.perf_counter()
    result = qa.run(df, question.question)
    predicted = result.answer.text if result.answer is not None else None
    return DatabenchRow(
        id=question.id,
        dataset=question.dataset,
        type=question.type,
        question=question.question,
        gold=gold,
        predicted=predicted,
        predicted_type=result.answer.type.value if result.answer is not None else None,
        correct=compare(predicted, gold, question.type),
        skipped=False,
        error=result.error,
        code=result.code,
        attempts=len(result.attempts),
        llm_calls=len(result.calls),
        tokens=result.tokens,
        seconds=time.perf_counter() - started,
    )


def load_run(path: str | Path) -> dict[str, object]:
    """A run file written by ``foretab bench databench --json``."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise DatabenchError(f"cannot read DataBench run {str(path)!r}: {error}") from None
    if not isinstance(data, dict) or data.get("benchmark") != "databench":
        raise DatabenchError(f"{str(path)!r} is not a `foretab bench databench --json` run")
    return data


def is_databench_run(path: str | Path) -> bool:
    """Whether ``path`` is a run file of ``foretab bench databench`` (for ``bench report``)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8")).get("benchmark") == "databench"
    except (OSError, ValueError, AttributeError):
        return False


def ablation_markdown(runs: list[dict[str, object]]) -> str:
    """The four-pipeline ablation table (paper Table 2) from several runs."""
    header = (
        "| Pipeline | Task | Model | Accuracy | "
        + " | ".join(SEMANTICS)
        + " | LLM calls | tokens | seconds |"
    )
    lines = [header, "|" + "---|" * (7 + len(SEMANTICS))]
    for run in runs:
        by_type = run.get("by_type") or {}
        cells = [
            f"{by_type[t]['accuracy']:.2f}" if isinstance(by_type, dict) and t in by_type else "–"
            for t in SEMANTICS
        ]
        lines.append(
            f"| {run['pipeline']} | {run['task']} | {run['model']} | {float(run['accuracy']):.2f} | "  # type: ignore[arg-type]
            + " | ".join(cells)
            + f" | {run['llm_calls']} | {run['tokens']} | {run['seconds']} |"
        )
    return "\n".join(lines) + "\n"
