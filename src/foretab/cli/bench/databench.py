"""``foretab bench databench``: the LyS PRESTA pipeline on DataBench, official scoring."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from foretab.cli.common import exit_on_error
from foretab.cli.main import bench_app
from foretab.cli.options import TableQAChoice, llm_options, tableqa_options
from foretab.llm.settings import LLMSettings


@bench_app.command("databench")
@exit_on_error
@tableqa_options
@llm_options
def databench(
    data: Annotated[
        Path, typer.Option("--data", help="DataBench folder (qa.jsonl, tables/).")
    ] = Path("../shared/data/databench"),
    lite: Annotated[
        bool, typer.Option("--lite", help="The lite task: sample tables, sample answers.")
    ] = False,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Only the first N questions.")
    ] = None,
    workers: Annotated[int, typer.Option("--workers", min=1, help="Questions in parallel.")] = 1,
    json_out: Annotated[
        Path | None,
        typer.Option("--json", help="Write the run (summary and every question) to this file."),
    ] = None,
    *,
    tableqa: TableQAChoice,
    llm: LLMSettings,
) -> None:
    """Run the table-QA pipeline on DataBench and score it with the official rules.

    Prints accuracy overall and per answer type, LLM calls, tokens and seconds; questions
    whose table is missing are scored as wrong and counted separately. Compare pipelines
    with `foretab bench report RUN.json ... --out report.md`.
    """
    from foretab.bench.tableqa.databench import run_databench
    from foretab.cli.progress import count_bar

    provider = llm.provider()
    qa = tableqa.build(provider)
    with provider, count_bar("DataBench") as bar:
        task = bar.add_task("questions", total=None)
        report = run_databench(
            data,
            qa,
            lite=lite,
            limit=limit,
            workers=workers,
            progress=lambda done, total: bar.update(task, completed=done, total=total),
        )
    summary = report.to_dict()
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(summary, ensure_ascii=False, indent=1, default=str))
    grid = Table(
        title=f"DataBench ({summary['task']}), pipeline {tableqa.pipeline}, model {report.model}"
    )
    grid.add_column("type")
    grid.add_column("correct", justify="right")
    grid.add_column("accuracy", justify="right")
    for kind, (right, total) in report.by_type().items():
        grid.add_row(kind, f"{right}/{total}", f"{100 * right / total:.2f}")
    grid.add_row("all", f"{report.correct}/{report.n}", f"{report.accuracy:.2f}", style="bold")
    console = Console()
    console.print(grid)
    console.print(
        f"skipped (no table): {summary['skipped_no_table']}, no answer: "
        f"{summary['failed_no_answer']}, LLM calls: {summary['llm_calls']}, tokens: "
        f"{summary['tokens']}, {summary['seconds']} s"
        + (f"; written to {json_out}" if json_out else "")
    )
