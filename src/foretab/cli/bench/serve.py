"""``foretab bench serve``: a bounded load test of ``foretab serve`` on loopback."""

from __future__ import annotations

from collections.abc import Callable
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
        int,
        typer.Option(min=1, max=20_000, help="Questions timed per run (after the warm-up)."),
    ] = 1000,
    concurrency: Annotated[int, typer.Option(min=1, max=200, help="Requests in flight.")] = 20,
    engines: Annotated[
        int, typer.Option(min=1, max=32, help="The server's --engines (per worker).")
    ] = 2,
    workers: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=64,
            help="Workers of the second run (default: the cores); the first has one.",
            show_default=False,
        ),
    ] = None,
    future: Annotated[str, typer.Option(help="The server's --future: model, oracle or none.")] = (
        "model"
    ),
    dataset: Annotated[
        list[Path] | None,
        typer.Option(
            help="Questions from a QA dataset (`foretab bench build --out DIR`: the folder, "
            "or .jsonl files; repeatable). Default: build one from the store now.",
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the question build and shuffle.")] = 0,
    warmup: Annotated[
        int, typer.Option(min=0, max=1000, help="Untimed questions per run, first.")
    ] = 20,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the figures here.")] = None,
) -> None:
    """Load `foretab serve` on loopback with one worker, then with N (POST /api/ask).

    Each run sends its own distinct questions of every family of the QA builder (English
    and Chinese; none repeated, so no figure comes from a repeat) and prints throughput,
    p50/p95/p99 latency, errors, 503s (queue full) and the RSS of each server worker.
    """
    from foretab.extras import require

    require("uvicorn", "serve")
    require("fastapi", "serve")
    from foretab.bench.perf.host import loop_ms_text
    from foretab.bench.perf.serve_load import LoadReport, compare, load_questions, write_json
    from foretab.web.workers import default_workers

    if future not in ("model", "oracle", "none"):
        raise typer.BadParameter("use model, oracle or none", param_hint="--future")
    n_workers = workers if workers is not None else default_workers()
    console = Console(stderr=True)
    if not dataset:
        console.print("building the questions from the store (`foretab bench build`) ...")
    mix = load_questions(db, dataset=dataset or (), seed=seed)
    result = compare(
        db,
        mix,
        requests=requests,
        concurrency=concurrency,
        engines=engines,
        future=future,
        workers=n_workers,
        warmup=warmup,
    )
    first = result.runs[0]
    table = Table(
        title=f"foretab serve: {first.requests} requests per run, {first.concurrency} "
        f"concurrent, {first.engines} engines per worker, future={first.future}; "
        f"{result.distinct_questions} distinct questions"
    )
    table.add_column("measure")
    for run in result.runs:
        table.add_column(f"{run.workers} worker{'s' if run.workers > 1 else ''}", justify="right")

    def row(name: str, show: Callable[[LoadReport], str]) -> None:
        table.add_row(name, *(show(r) for r in result.runs))

    row("throughput (requests/s)", lambda r: f"{r.throughput_rps:.1f}")
    for name in ("p50", "p95", "p99", "max"):
        row(f"latency {name} (ms)", lambda r, n=name: f"{getattr(r, n + '_ms'):.1f}")
    row("server CPU per request (ms)", lambda r: f"{r.cpu_ms_per_request:.2f}")
    row("errors (5xx but 503, transport)", lambda r: str(r.errors))
    row("503 (queue full)", lambda r: str(r.busy))
    row("refused (4xx)", lambda r: str(r.refused))
    row("statuses", lambda r: ", ".join(f"{k}: {v}" for k, v in r.statuses.items()))
    row(
        "RSS per worker at end (MiB)",
        lambda r: " / ".join(f"{m:.0f}" for m in r.rss_per_worker_mib),
    )
    row(
        "server RSS start / warm / end (MiB)",
        lambda r: f"{r.rss_start_mib:.0f} / {r.rss_warm_mib:.0f} / {r.rss_end_mib:.0f}",
    )
    row("load average before / after", lambda r: f"{r.load_before} / {r.load_after}")
    # The host's speed at the time (CPU ms of a fixed loop): the same server's figures move with it.
    row("host: 10M-addition loop, before / after (ms)", lambda r: loop_ms_text(r.host_loop_s))
    Console().print(table)
    Console().print(
        "questions: " + ", ".join(f"{k} {v}" for k, v in result.families.items()),
        highlight=False,
    )
    if json_out is not None:
        write_json(result, json_out)
