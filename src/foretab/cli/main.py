"""The ``foretab`` command: a thin layer over the library.

Each command group lives in its own module and registers itself on ``app`` (or
``bench_app``); this file only assembles them and turns ``ForetabError`` into a clean
exit.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from foretab.errors import ForetabError

app = typer.Typer(
    name="foretab",
    help=(
        "Answer natural-language questions, including questions about the future, over a "
        "corpus of time-indexed tables (monthly project prices)."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
bench_app = typer.Typer(
    help="Benchmarks: forecasting/imputation models, the corpus forecaster, QA datasets.",
    no_args_is_help=True,
)
app.add_typer(bench_app, name="bench")


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"foretab {version('foretab')}")
        except PackageNotFoundError:  # run from a source tree without an install
            typer.echo("foretab (not installed)")
        raise typer.Exit()


@app.callback()
def root(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Answer natural-language questions over a corpus of time-indexed tables."""


def register_commands() -> None:
    """Add every command to ``app`` / ``bench_app`` (their modules register on import)."""
    from foretab.cli import (  # noqa: F401
        ask,
        chat,
        demo,
        projects,
        query,
        serve,
        store_cmds,
        tableqa,
    )
    from foretab.cli.bench import (  # noqa: F401
        calibrate,
        databench,
        forecast,
        latency,
        qa,
        retqa,
        scale,
        units,
    )
    from foretab.cli.bench import serve as bench_serve  # noqa: F401


def _start_answering() -> None:
    """What a ``foretab ask`` process can start before it reads its arguments (cold start).

    The SQL guard's worker process starts now and opens the DuckDB store, on the other
    core while this one imports its modules and opens the store too (the engine then takes
    the worker as a spare; at 100x the corpus DuckDB takes over a second to open a store
    of 30,592 tables); and the process is declared predict-only, so LightGBM loads without
    scikit-learn (1.4 s; ``foretab.forecast.lightgbm_import``); and the garbage collector
    waits until the store is open (``foretab.cli.heap``).
    """
    from foretab.cli.heap import pause_while_opening
    from foretab.forecast.lightgbm_import import predict_only_process
    from foretab.sql.limits import DEFAULT_MEMORY_BYTES
    from foretab.sql.pool import prestart

    pause_while_opening()
    predict_only_process()
    prestart(DEFAULT_MEMORY_BYTES, preopen=_duckdb_store(sys.argv))


def _duckdb_store(argv: list[str]) -> str | None:
    """The ``--db`` of the command line when it is a DuckDB store (not a URL), else None."""
    for i, arg in enumerate(argv):
        value = argv[i + 1] if arg == "--db" and i + 1 < len(argv) else None
        if arg.startswith("--db="):
            value = arg.removeprefix("--db=")
        if value is not None:
            return None if "://" in value else value
    return None


def main() -> None:
    """Console-script entry point."""
    if sys.argv[1:2] == ["ask"]:
        _start_answering()
    register_commands()
    try:
        app()
    except ForetabError as exc:
        # Commands decorated with ``exit_on_error`` handle this themselves; this is the net
        # for the rest, so a user never sees a traceback for a problem we explained.
        from foretab.cli.common import ERROR_EXIT_CODE, report_error

        report_error(exc, as_json="--json" in sys.argv)
        sys.exit(ERROR_EXIT_CODE)
