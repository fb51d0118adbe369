"""Sample questions asked at the end of ``foretab demo``: one per question family.

The forecaster is trained on the demo store first (history up to the reference month only),
then every question goes through the real engine: parse → retrieve → guarded SQL →
forecast → analyze.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table

from foretab.cli.safe_text import cell
from foretab.errors import ForetabError
from foretab.store import EntityEntry, open_history


@dataclass(frozen=True, slots=True)
class SampleAnswer:
    """One asked question and what came back (``error`` when the engine refused it)."""

    question: str
    answer: list[list[str | float]] | None
    text: str
    error: str = ""


def sample_questions(db: str) -> list[str]:
    """Questions of every family about projects that have recent history in the store."""
    with open_history(db) as store:
        reference = store.reference_month
        projects = store.entities()
    assert reference is not None, "the demo store is ingested with a reference month"
    recent = [p for p in projects if p.last_month == reference and p.n_months >= 12]
    by_district: dict[tuple[str, str], list[EntityEntry]] = {}
    for p in recent:
        by_district.setdefault((p.outer, p.inner), []).append(p)
    (city, district), group = max(by_district.items(), key=lambda kv: (len(kv[1]), kv[0]))
    a, b, c = (group + group)[:3]
    place = f"{district.removesuffix(' District')}, {city}"
    return [
        f"What will the average price of {a.name} in {place} be next month?",
        f"What is the highest monthly price {a.name} in {place} is expected to reach in the next six months?",
        f"List the expected monthly prices of {b.name} in {place} for the first quarter of next year.",
        f"What will the average prices of {a.name} and {b.name} in {place} be in three months?",
        f"Will the average price of {b.name} in {place} over next year be higher or lower than now?",
        f"Which of {a.name}, {b.name} and {c.name} in {place} will see a bigger price increase next year?",
        f"Which will be cheaper next quarter, {a.name} or {c.name} in {place}?",
        f"What was the average price of {c.name} in {place} last month?",
    ]


def ask_samples(db: str, questions: list[str]) -> list[SampleAnswer]:
    """Answer each question with the trained forecaster; refusals are kept, not raised."""
    from foretab.engine import Engine

    answers: list[SampleAnswer] = []
    with Engine.open(db, future="model") as engine:
        for question in questions:
            try:
                result = engine.ask(question)
                answers.append(SampleAnswer(question, result.answer, result.text))
            except ForetabError as exc:
                answers.append(SampleAnswer(question, None, "", exc.message))
    return answers


def show_sample_questions(db: str, console: Console, model: str | None = None) -> None:
    """Train the store's forecaster, ask one question per family and print the answers."""
    from foretab.cli.training import train_with_bar

    started = time.perf_counter()
    fitted = train_with_bar(db, model, 0, console)
    console.print(
        f"\n[bold]Forecaster[/] {fitted.model} trained on {fitted.n_series} projects "
        f"in {time.perf_counter() - started:.1f} s (saved with the store)."
    )
    table = Table(title="Sample questions (foretab ask)", show_lines=True)
    table.add_column("question", overflow="fold", ratio=3)
    table.add_column("answer", overflow="fold", ratio=2)
    for sample in ask_samples(db, sample_questions(db)):
        shown = cell(sample.text) if not sample.error else cell(f"refused: {sample.error}", "red")
        table.add_row(cell(sample.question), shown)
    console.print(table)
    console.print(f'Ask your own: foretab ask "..." --db {db}   (add --json for the full trace)')
