"""``foretab bench latency``: warm and cold question-answering latency."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress
from rich.table import Table

from foretab.cli.common import DbOption, exit_on_error
from foretab.cli.main import bench_app

if TYPE_CHECKING:
    from foretab.bench.perf.latency import LatencyReport


@bench_app.command("latency")
@exit_on_error
def latency(
    db: DbOption,
    dataset: Annotated[
        Path | None,
        typer.Option(
            help="A QA dataset (.jsonl from `foretab bench build`); default: built-in questions."
        ),
    ] = None,
    n: Annotated[
        int,
        typer.Option(
            help="How many questions to time (0: all of --dataset). From a dataset they are drawn "
            "at random (--seed) from the whole file: a built file is ordered by template, so "
            "its first N cover a few families only."
        ),
    ] = 300,
    seed: Annotated[int, typer.Option(help="The draw of --n questions from --dataset.")] = 0,
    future: Annotated[str, typer.Option(help="model, oracle or none.")] = "model",
    cold_runs: Annotated[int, typer.Option(help="Fresh `foretab ask` processes to time.")] = 3,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the figures here.")] = None,
) -> None:
    """Print warm Engine.ask p50/p95 and cold `foretab ask` wall time (milliseconds)."""
    from foretab.bench.perf.host import loop_ms_text
    from foretab.bench.perf.latency import (
        builtin_questions,
        measure,
        sample_questions,
        write_json,
    )
    from foretab.bench.perf.serve_load import read_questions

    families: list[str] | None = None
    if dataset is not None:
        # Each question with its family as `foretab bench serve` names it: the per-family table.
        family_of = {question: family for question, family, _ in read_questions([dataset])}
        questions = sample_questions(list(family_of), n, seed)
        families = [family_of[q] for q in questions]
    else:
        questions = builtin_questions(db, n)
    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("asking", total=len(questions))
        report = measure(
            db,
            questions,
            future=future,
            cold_runs=cold_runs,
            progress=lambda done, _total: bar.update(task, completed=done),
            families=families,
        )
    table = Table(title=f"foretab latency ({report.questions} questions, {report.errors} refused)")
    table.add_column("measure")
    table.add_column("ms", justify="right")
    table.add_row("warm Engine.ask p50", f"{report.warm_p50_ms:.2f}")
    table.add_row("warm Engine.ask p95", f"{report.warm_p95_ms:.2f}")
    table.add_row("warm Engine.ask max", f"{report.warm_max_ms:.2f}")
    table.add_row(
        "CPU a warm question: engine + SQL guard worker",
        f"{report.cpu_ms_engine:.2f} + {report.cpu_ms_guard:.2f}",
    )
    table.add_row("Engine start (+ first ask)", f"{report.engine_start_ms:.0f}")
    # The host's speed at the time: the same code's figures move with it.
    table.add_row("host: 10M-addition loop, before / after", loop_ms_text(report.host_loop_s))
    table.add_row("cold `foretab ask` (median)", f"{report.cold_ask_median_ms:.0f}")
    Console().print(table)
    Console().print(_family_table(report))
    if json_out is not None:
        write_json(report, json_out)


def _family_table(report: LatencyReport) -> Table:
    """Per family: count, p50 / p95, share of the time, CPU and the mean ms of each stage."""
    table = Table(
        title="warm asks by family: ms; cpu (engine + SQL guard) and stages are means a question",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        padding=(0, 0, 0, 1),  # one space between columns: it fits 80 columns
    )
    table.add_column("family", no_wrap=True, max_width=16)
    for name in ("n", "p50", "p95", "%", "cpu", *SHORT.values()):
        table.add_column(name, justify="right", no_wrap=True)
    for family, figures in report.by_family.items():
        table.add_row(
            escape(family),
            str(figures.questions),
            f"{figures.p50_ms:.1f}",
            f"{figures.p95_ms:.1f}",
            f"{100 * figures.share:.0f}",
            f"{figures.cpu_ms:.1f}",
            *(f"{figures.stages_ms[stage]:.1f}" for stage in SHORT),
        )
    return table


#: The stage columns' headings, short enough for an 80-column terminal.
SHORT = {
    "plan": "plan",
    "retrieve": "retr",
    "read": "read",
    "forecast": "fcst",
    "analyze": "anlz",
    "other": "rest",  # the engine's own glue, and a lazily loaded forecaster
}
