"""``foretab bench scale``: ingest, training and question costs at K times the real corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from foretab.cli.common import exit_on_error
from foretab.cli.main import bench_app

console = Console(stderr=True)


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        sizes = []
    if not sizes or any(k < 1 for k in sizes):
        raise typer.BadParameter(f"{text!r}: write positive whole numbers, e.g. 1,10,100")
    return sorted(set(sizes))


@bench_app.command("scale")
@exit_on_error
def scale(
    sizes: Annotated[
        str,
        typer.Option(help="Corpus sizes K (times the real corpus), comma-separated."),
    ] = "1,10",
    out: Annotated[
        Path,
        typer.Option(help="Folder for the corpora, stores, scale.json, scale.md and scale.png."),
    ] = Path("bench-scale"),
    pg: Annotated[
        str | None,
        typer.Option(
            "--pg",
            help="Also measure PostgreSQL: a postgresql://USER@HOST:PORT URL of a server "
            "where databases foretab_scale_K (and _future) may be created or replaced.",
        ),
    ] = None,
    seed: Annotated[
        int, typer.Option(help="Seed of the corpora, the models and the questions.")
    ] = 0,
    per_family: Annotated[
        int, typer.Option(help="Questions timed per question family (7 families).")
    ] = 20,
    cold_runs: Annotated[int, typer.Option(help="Fresh `foretab ask` processes per K.")] = 3,
    nice: Annotated[
        int, typer.Option(help="Run every stage under `nice -n N` (a shared machine).")
    ] = 0,
    duckdb: Annotated[
        bool,
        typer.Option(
            "--duckdb/--no-duckdb", help="Measure DuckDB stores (--no-duckdb: --pg only)."
        ),
    ] = True,
    append: Annotated[
        bool,
        typer.Option(
            "--append/--no-append",
            help="Keep the rows of an earlier scale.json in --out (other K or backends).",
        ),
    ] = False,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume/--no-resume",
            help="Reuse the ingest and training figures a cut-short run kept in --out "
            "(scale-K-BACKEND.STAGE.json) instead of running those stages again.",
        ),
    ] = False,
) -> None:
    """Generate K-times corpora and measure each stage's seconds, memory and latency.

    For every K: ingest seconds and peak RSS, training seconds and peak RSS, store size,
    catalog tables, median retrieval time, warm Engine.ask p50/p95 (overall and per
    question family), engine peak RSS and cold start (a fresh `foretab ask`). Writes
    scale.json, a Markdown table with the fitted log-log growth exponents (scale.md) and
    a log-log plot (scale.png) in --out. Each stage runs in its own process.
    """
    from foretab.bench.perf.scale import (
        markdown_table,
        measure_scale,
        plot_scale,
        read_rows,
        write_rows,
    )

    ks = _sizes(sizes)
    if not duckdb and pg is None:
        raise typer.BadParameter("--no-duckdb leaves nothing to measure: add --pg URL")
    out.mkdir(parents=True, exist_ok=True)
    json_path = out / "scale.json"
    rows = read_rows(json_path) if append and json_path.exists() else []
    targets: list[tuple[int, str | None]] = [(k, None) for k in ks] if duckdb else []
    if pg is not None:
        base = pg.rstrip("/")
        targets += [(k, f"{base}/foretab_scale_{k}") for k in ks]
    for k, db in targets:
        row = measure_scale(
            k,
            out,
            db=db,
            seed=seed,
            per_family=per_family,
            cold_runs=cold_runs,
            nice=nice,
            progress=lambda text: console.print(text),
            resume=resume,
        )
        rows = [r for r in rows if (r.scale, r.backend) != (k, row.backend)] + [row]
        write_rows(rows, json_path)  # after every K: a long run keeps what it measured
    table = markdown_table(rows)
    (out / "scale.md").write_text(table)
    plot_scale(rows, out / "scale.png")
    typer.echo(table)
    console.print(f"wrote {json_path}, {out / 'scale.md'} and {out / 'scale.png'}")
