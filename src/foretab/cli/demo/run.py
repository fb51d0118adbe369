"""``foretab demo``: generate the synthetic corpus, ingest it, show what is there."""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass

from rich.console import Console

from foretab.cli.demo.overview import StoreOverview, render_overview, summarize_store
from foretab.cli.demo.questions import show_sample_questions
from foretab.cli.demo.sample_query import SampleQuery, run_sample_query, shell_quote
from foretab.cli.progress import stage_bar
from foretab.core.months import Month
from foretab.demo.defaults import (
    DEFAULT_DB,
    DEFAULT_MONTHS,
    DEFAULT_SEED,
    DEFAULT_START,
    default_reference_month,
)
from foretab.demo.generate import DemoError, generate_corpus
from foretab.store.ingest import IngestSummary, ingest_frame


@dataclass(frozen=True, slots=True)
class DemoResult:
    """What ``foretab demo`` built and how long each part took."""

    ingest: IngestSummary
    overview: StoreOverview
    sample: SampleQuery | None
    generate_seconds: float
    total_seconds: float


def run_demo(
    db: str = DEFAULT_DB,
    *,
    seed: int = DEFAULT_SEED,
    reference_month: Month | None = None,
    console: Console | None = None,
    model: str | None = None,
) -> DemoResult:
    """Build the demo store at ``db`` (replacing it), train ``model`` and print what it holds."""
    console = console or Console()
    started = time.perf_counter()
    reference = reference_month or default_reference_month()
    last = DEFAULT_START + (DEFAULT_MONTHS - 1)
    if not DEFAULT_START <= reference <= last:
        raise DemoError(
            f"--reference-month {reference.iso} is outside the demo corpus "
            f"({DEFAULT_START.iso}..{last.iso}); pick a month inside it, or omit it for "
            f"{default_reference_month().iso}."
        )
    with console.status("Generating the synthetic corpus ..."):
        corpus = generate_corpus(seed)
    generated = time.perf_counter()
    console.print(
        f"Generated {len(corpus):,} project-months for "
        f"{corpus[['city', 'district', 'project']].drop_duplicates().shape[0]} projects "
        f"(seed {seed}, {generated - started:.2f} s)."
    )
    with stage_bar("ingest", console) as on_table:
        summary = ingest_frame(corpus, db, reference, source=f"demo-seed-{seed}", progress=on_table)
    console.print(
        f"Ingested into {summary.location.describe()} in {summary.seconds:.2f} s: "
        f"{summary.history_tables} history tables, {summary.future_tables} future tables."
    )
    overview = summarize_store(db)
    render_overview(overview, console)
    sample = run_sample_query(db, overview, console)
    _print_next_steps(db, sample, console)
    show_sample_questions(db, console, model)
    return DemoResult(
        ingest=summary,
        overview=overview,
        sample=sample,
        generate_seconds=generated - started,
        total_seconds=time.perf_counter() - started,
    )


def _print_next_steps(db: str, sample: SampleQuery | None, console: Console) -> None:
    quoted = shlex.quote(db)
    statement = sample.sql if sample is not None else "SELECT ..."
    console.print("\n[bold]Next steps[/bold]")
    for line in (
        f"foretab tables --db {quoted}",
        f"foretab sql {shell_quote(statement)} --db {quoted}",
    ):
        # Not wrapped, so each command can be copied as one line.
        console.print(f"  {line}", markup=False, highlight=False, soft_wrap=True)
