"""Few-shot examples for the TimeFore prompts, adapted to the store's reference month.

Two sources, both deterministic:

* the benchmark's train split (``foretab bench build`` output, ``--fewshot DIR/train.jsonl``):
  questions, gold captions and gold history SQL as written for this store; the analyzer
  examples read their history through the guard, forecast it with the Forecaster's own tool
  and take the exact analyzer's answer, so examples never touch the future store;
* a small shipped set (``prompts/examples.json``): questions with relative time expressions
  ("next month", "the next three months"), their captions and SQL generated for the store's
  reference month, synthetic prices from a fixed seed, and answers computed by foretab's
  exact analyzer — so every example is consistent with the rules it illustrates.

Examples are picked round-robin over question families, in a fixed order, five per prompt.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources

import numpy as np

from foretab.analyze import RuleAnalyzer
from foretab.core.months import Month, month_range
from foretab.core.plan import Aggregate, Comparison, EntityRef, Plan, Task, TimeWindow
from foretab.core.series import Forecast, ForecastPoint, History
from foretab.dataset.gold_sql import history_sql
from foretab.retrieve import history_span, required_captions
from foretab.store.naming import table_name

Cell = str | float
SHOTS = 5


@dataclass(frozen=True, slots=True)
class Example:
    """One worked question: what each prompt shows of it."""

    question: str
    reference: Month
    task: Task
    family: str  # for round-robin selection: aggregate/comparison/number of projects
    projects: tuple[EntityRef, ...]
    captions: tuple[str, ...]
    tables: tuple[str, ...]
    sql: str
    history: History | None = None
    forecast: Forecast | None = None
    answer: tuple[tuple[Cell, ...], ...] = ()

    @property
    def answer_list(self) -> list[list[Cell]]:
        return [list(row) for row in self.answer]


def pick(examples: Sequence[Example], k: int = SHOTS, task: Task | None = None) -> list[Example]:
    """``k`` examples (of ``task``), one family at a time, in the given order."""
    pool = [e for e in examples if task is None or e.task is task]
    families: dict[str, list[Example]] = {}
    for example in pool:
        families.setdefault(example.family, []).append(example)
    chosen: list[Example] = []
    while len(chosen) < min(k, len(pool)):
        for group in families.values():
            if group and len(chosen) < k:
                chosen.append(group.pop(0))
    return chosen


def _synthetic(ref: EntityRef, reference: Month) -> tuple[dict[Month, float], dict[Month, float]]:
    """Deterministic monthly prices R-23..R+12 with gaps (R-1 and R always observed)."""
    rng = np.random.default_rng(zlib.crc32(ref.name.encode("utf-8")))
    price = float(rng.uniform(8_000, 90_000))
    history: dict[Month, float] = {}
    future: dict[Month, float] = {}
    for month in month_range(reference - 23, reference + 12):
        price *= float(rng.normal(1.0, 0.03))
        if month > reference:
            future[month] = round(price, 2)
        elif month >= reference - 1 or rng.random() < 0.75:
            history[month] = round(price, 2)
    return history, future


def shipped_examples(reference: Month) -> list[Example]:
    """The shipped examples, dated for ``reference``."""
    raw = json.loads(
        resources.files("foretab.timefore").joinpath("prompts/examples.json").read_text("utf-8")
    )
    out = []
    for row in raw:
        projects = tuple(EntityRef(*p) for p in row["projects"])
        first, last = (reference + int(row["window"][0]), reference + int(row["window"][1]))
        plan = Plan(
            question=row["question"],
            reference_month=reference,
            entities=projects,
            window=TimeWindow(first, last, row["expression"]),
            aggregate=Aggregate(row["aggregate"]),
            task=Task(row["task"]),
            comparison=Comparison(row["comparison"]),
        )
        series = {ref: _synthetic(ref, reference) for ref in projects}
        history = History({ref: h for ref, (h, _) in series.items()})
        forecast = Forecast(
            "example",
            {ref: {m: ForecastPoint(v) for m, v in f.items()} for ref, (_, f) in series.items()},
        )
        answer = RuleAnalyzer().analyze(plan, history, forecast).answer
        out.append(_example(plan, history, forecast, answer, family=_family(plan)))
    return out


def _family(plan: Plan) -> str:
    many = "multi" if len(plan.entities) > 1 else "single"
    return f"{plan.aggregate.value}/{plan.comparison.value}/{many}"


def _example(
    plan: Plan,
    history: History | None,
    forecast: Forecast | None,
    answer: Sequence[Sequence[Cell]],
    *,
    family: str,
    captions: Sequence[str] | None = None,
    tables: Sequence[str] | None = None,
    sql: str | None = None,
) -> Example:
    first, last = history_span(plan)
    if captions is None or tables is None:
        captions = required_captions(plan)
        years = range(first.year, last.year + 1)
        tables = [table_name(p.inner, p.outer, y) for p in plan.entities for y in years]
        tables = list(dict.fromkeys(tables))
    if sql is None:
        sql = history_sql(tables, [p.name for p in plan.entities], first, last) + ";"
    if forecast is not None and plan.task is Task.HISTORY:
        forecast = None
    return Example(
        question=plan.question,
        reference=plan.reference_month,
        task=plan.task,
        family=family,
        projects=plan.entities,
        captions=tuple(captions),
        tables=tuple(tables),
        sql=sql,
        history=history,
        forecast=forecast,
        answer=tuple(tuple(row) for row in answer),
    )


def train_examples(
    items: Sequence[object],
    plan_of: Callable[[str], Plan],
    history_of: Callable[[Plan, str], History],
    forecast_of: Callable[[Plan, History], Forecast],
    per_task: int = 3 * SHOTS,
) -> list[Example]:
    """Examples from benchmark items (``QAItem``), in id order, ``per_task`` per task.

    Items that cannot be planned, read or forecast are skipped: an example must be
    consistent end to end.
    """
    from foretab.errors import ForetabError

    out: list[Example] = []
    taken: dict[str, int] = {}
    for item in sorted(items, key=lambda i: getattr(i, "id", "")):
        task = str(getattr(item, "task", ""))
        if taken.get(task, 0) >= per_task:
            continue
        try:
            plan = plan_of(item.question)  # type: ignore[attr-defined]
            history = history_of(plan, item.history_sql)  # type: ignore[attr-defined]
            forecast = forecast_of(plan, history) if plan.needs_forecast else None
            answer = (
                RuleAnalyzer().analyze(plan, history, forecast or Forecast.nothing_needed()).answer
            )
        except ForetabError:
            continue
        out.append(
            _example(
                plan,
                history,
                forecast,
                answer,
                family=str(getattr(item, "template_id", _family(plan))),
                captions=item.table_captions,  # type: ignore[attr-defined]
                tables=item.tables,  # type: ignore[attr-defined]
                sql=item.history_sql.rstrip().rstrip(";") + ";",  # type: ignore[attr-defined]
            )
        )
        taken[task] = taken.get(task, 0) + 1
    return out
