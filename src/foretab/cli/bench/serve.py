"""``foretab bench serve``: a bounded load test of ``foretab serve`` on loopback."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from foretab.cli.common import DbOption, exit_on_error
from foretab.cli.main import bench_app


@bench_app.command("serve")
@exit_on_error
def serve_load(
    db: DbOption,
    requests: Annotated[
        int, typer.Option(min=1, max=20_000, help="Questions to send (after the warm-up).")
    ] = 500,
    concurrency: Annotated[int, typer.Option(min=1, max=200, help="Requests in flight.")] = 20,
    engines: Annotated[int, typer.Option(min=1, max=32, help="The server's --engines.")] = 4,
    future: Annotated[str, typer.Option(help="The server's --future: model, oracle or none.")] = (
        "model"
    ),
    seed: Annotated[int, typer.Option(help="Seed of the built-in question set.")] = 0,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the figures here.")] = None,
) -> None:
    """Start `foretab serve` on a free loopback port and load POST /api/ask.

    Sends the built-in rule-engine questions (as `foretab bench latency`) over projects of
    the store, and prints throughput, p50/p95/p99 latency, statuses and the server's RSS.
    """
    from foretab.bench.perf.latency import builtin_questions
    from foretab.bench.perf.serve_load import run_load, write_json

    if future not in ("model", "oracle", "none"):
        raise typer.BadParameter("use model, oracle or none", param_hint="--future")
    questions = builtin_questions(db, requests, seed=seed)
    report = run_load(db, questions, concurrency=concurrency, engines=engines, future=future)
    table = Table(
        title=f"foretab serve: {report.requests} requests, {report.concurrency} concurrent, "
        f"{report.engines} engines, future={report.future}"
    )
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("throughput (requests/s)", f"{report.throughput_rps:.1f}")
    for name in ("p50", "p95", "p99", "max"):
        table.add_row(f"latency {name} (ms)", f"{getattr(report, name + '_ms'):.1f}")
    table.add_row("errors (5xx, transport)", str(report.errors))
    table.add_row("refused (4xx)", str(report.refused))
    table.add_row("statuses", ", ".join(f"{k}: {v}" for k, v in report.statuses.items()))
    table.add_row(
        f"server RSS start / warm / half / end (MiB; {report.processes} processes)",
        f"{report.rss_start_mib:.0f} / {report.rss_warm_mib:.0f} / "
        f"{report.rss_half_mib:.0f} / {report.rss_end_mib:.0f}",
    )
    table.add_row(
        "machine load average before / after", f"{report.load_before} / {report.load_after}"
    )
    Console().print(table)
    if json_out is not None:
        write_json(report, json_out)
