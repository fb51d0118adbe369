"""``foretab bench build``, ``foretab bench run`` and ``foretab bench report``: the QA benchmark."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from foretab.cli.common import DbOption, exit_on_error
from foretab.cli.main import bench_app
from foretab.cli.options import DEFAULT_DECISION_NAME, DecisionOption, engine_options
from foretab.cli.progress import count_bar
from foretab.engine.choice import EngineChoice

console = Console(stderr=True)


@bench_app.command("build")
@exit_on_error
def build(
    db: DbOption,
    out: Annotated[
        Path, typer.Option("--out", help="Folder for train/val/test.jsonl and manifest.json.")
    ],
    seed: Annotated[int, typer.Option(help="Seed of the project split and the sampling.")] = 0,
    test_size: Annotated[
        int,
        typer.Option(
            "--test-size",
            help="About how many test questions (val the same, train 3x); spread evenly "
            "over the templates.",
        ),
    ] = 1500,
    min_history_months: Annotated[
        int,
        typer.Option(help="Observed months a project needs in the 24 up to the reference month."),
    ] = 6,
    families: Annotated[
        str,
        typer.Option(
            "--families",
            help="all: the ODTQA-FoRe templates and the scope / threshold / which-month / "
            "units / change families (English and Chinese); odtqa: the ODTQA-FoRe ones only.",
        ),
    ] = "all",
) -> None:
    """Build an ODTQA-FoRe-style QA dataset from the store's history and future.

    36 ODTQA-FoRe templates (forecasting, forecast-based reasoning and history; one project
    or 2-3 in one district) and 27 of the issue-10 families (scope, threshold, which month,
    units, change; English and Chinese), the parser's time-expression catalog, a 6:2:2 split
    by project (scope questions: by district), and gold answers computed by SQL on the
    stores. DuckDB stores only.
    """
    from foretab.bench.qa.build import BuildConfig, build_dataset

    config = BuildConfig(
        seed=seed, test_size=test_size, min_history_months=min_history_months, families=families
    )
    with count_bar("gold SQL") as bar:
        task = bar.add_task("items", total=None)
        summary = build_dataset(
            db,
            out,
            config,
            progress=lambda done, total: bar.update(task, completed=done, total=total),
        )
    grid = Table(title=f"QA dataset in {summary.out_dir}", show_header=False)
    for split, count in summary.counts.items():
        grid.add_row(f"{split} questions", f"{count} ({summary.projects[split]} projects)")
    grid.add_row("templates", str(summary.templates))
    grid.add_row("time expressions", str(summary.time_expressions))
    grid.add_row("dropped (empty gold / missing month)", str(summary.dropped))
    Console().print(grid)


@bench_app.command("run")
@exit_on_error
@engine_options
def run(
    db: DbOption,
    dataset: Annotated[
        Path, typer.Option(help="A split written by `foretab bench build` (e.g. DIR/test.jsonl).")
    ],
    json_out: Annotated[Path, typer.Option("--json", help="Write the scores here.")],
    ablation: Annotated[
        str,
        typer.Option(help="none (full pipeline), gh-nf, gtc, gh-pf or gh-gf (paper §5.3)."),
    ] = "none",
    model: Annotated[
        str | None, typer.Option(help="Forecasting model name (default: the store's trained one).")
    ] = None,
    report: Annotated[
        Path | None, typer.Option(help="Also write a markdown report (and a PNG chart beside it).")
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N questions.")] = None,
    details: Annotated[
        Path | None, typer.Option(help="Write every question's answer and score (JSON Lines).")
    ] = None,
    workers: Annotated[
        int, typer.Option(help="Processes, each with its own engine (1 = in this process).")
    ] = 1,
    decision: DecisionOption = DEFAULT_DECISION_NAME,
    month_correlation: Annotated[
        float | None,
        typer.Option(
            help="Scenarios: correlation of one entity's forecast errors between two months "
            "(default 0.7; 1 = comonotone months)."
        ),
    ] = None,
    shared_correlation: Annotated[
        float | None,
        typer.Option(
            help="Scenarios: correlation between entities of one group, e.g. a district "
            "(default 0.05; 0 = independent)."
        ),
    ] = None,
    outer_correlation: Annotated[
        float | None,
        typer.Option(
            help="Scenarios: the extra correlation between entities of one outer place, e.g. "
            "a city, in different groups (default 0.05; 0 = none)."
        ),
    ] = None,
    fleeting_share: Annotated[
        float | None,
        typer.Option(
            help="Scenarios: the share of each shock (group, outer place) drawn afresh every "
            "month; the rest lasts through the window (default 0)."
        ),
    ] = None,
    shock_growth: Annotated[
        float | None,
        typer.Option(
            help="Scenarios: per month after R, the shocks' variance grows by this share of "
            "itself, a random walk per place (default 0: the same shock at every horizon)."
        ),
    ] = None,
    shock_shift: Annotated[
        float | None,
        typer.Option(
            help="Scenarios: per month after R, this share of the group shock's variance "
            "passes to a random walk of its outer place, e.g. from a district to its city "
            "(default 0: the shares stay as they are at R)."
        ),
    ] = None,
    *,
    engine: EngineChoice,
) -> None:
    """Ask the engine every question of DATASET and score it (ODTQA-FoRe metrics).

    With an LLM engine (--engine timefore|vanilla|hybrid) the report adds LLM calls,
    tokens and seconds per question.
    """
    from foretab.bench.qa.evaluate import ablation_spec, make_engine, run_benchmark, run_parallel
    from foretab.bench.qa.report import write_report
    from foretab.dataset.items import read_items
    from foretab.engine import provider_for

    ablation_spec(ablation)
    probe = provider_for(engine.kind, engine.llm)  # a missing LLM is one clear error, first
    if probe is not None:
        probe.close()
    stages: dict[str, object] = {}
    from foretab.analyze.probability import DEFAULT_DECISION
    from foretab.analyze.scenarios import Copula
    from foretab.engine.rules import StoreRuleAnalyzer

    chosen = Copula()
    given = (
        month_correlation,
        shared_correlation,
        outer_correlation,
        fleeting_share,
        shock_growth,
        shock_shift,
    )
    if any(c is not None for c in given):
        chosen = Copula(
            chosen.months if month_correlation is None else month_correlation,
            chosen.shared if shared_correlation is None else shared_correlation,
            chosen.outer if outer_correlation is None else outer_correlation,
            chosen.fleeting if fleeting_share is None else fleeting_share,
            chosen.growth if shock_growth is None else shock_growth,
            chosen.shift if shock_shift is None else shock_shift,
        )
    if decision != DEFAULT_DECISION or chosen != Copula():
        # The default engine already decides this way, with the default scenarios.
        stages["analyzer"] = StoreRuleAnalyzer(decision, chosen)
    copula = f"months {chosen.months:g}, shared {chosen.shared:g}, outer {chosen.outer:g}"
    if chosen.fleeting:
        copula += f", fleeting {chosen.fleeting:g}"
    if chosen.growth:
        copula += f", growth {chosen.growth:g}"
    if chosen.shift:
        copula += f", shift {chosen.shift:g}"
    meta = {"engine": engine.kind, "decision": decision, "copula": copula}
    meta["probability_calibration"], meta["calibration_methods"] = _calibration_in_force(db)
    items = read_items(dataset)
    if limit is not None:
        items = items[:limit]
    with count_bar(f"bench run ({ablation})") as bar:
        task = bar.add_task("questions", total=len(items))

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        if workers > 1:
            result = run_parallel(
                db, items, workers=workers, ablation=ablation, model=model,
                dataset=str(dataset), progress=progress,
                meta=meta,
                choice=engine, stages=stages,
            )  # fmt: skip
        else:
            built = make_engine(db, ablation, model, items, engine, stages)
            try:
                result = run_benchmark(
                    built, items, ablation=ablation, model=model,
                    dataset=str(dataset), progress=progress,
                    meta=meta,
                )  # fmt: skip
            finally:
                close = getattr(built, "close", None)
                if callable(close):
                    close()
    data = result.to_dict()
    json_out.parent.mkdir(parents=True, exist_ok=True)
    from foretab.core.schema import dumps_plain

    json_out.write_text(dumps_plain(data, indent=2) + "\n")
    if details is not None:
        details.parent.mkdir(parents=True, exist_ok=True)
        with details.open("w", encoding="utf-8") as handle:
            for item in result.results:
                handle.write(dumps_plain(item.to_dict(), ensure_ascii=False) + "\n")
    if report is not None:
        write_report([data], report)
    _print_run(data)


def _calibration_in_force(db: str) -> tuple[str, str]:
    """The store's probability calibration in words and its methods ("none": shares)."""
    from foretab.analyze.calibration import load_calibration
    from foretab.forecast.store import ARTIFACT_NAME
    from foretab.store import open_history

    with open_history(db) as store:
        calibration = load_calibration(store, ARTIFACT_NAME)
    if calibration is None or not calibration.curves:
        return "none", "none"
    methods = ", ".join(sorted({c.method for c in calibration.curves.values()}))
    return calibration.described, methods


def _print_run(data: dict[str, object]) -> None:
    grid = Table(title=f"bench run: {data['ablation_label']} ({data['questions']} questions)")
    grid.add_column("metric")
    grid.add_column("value", justify="right")
    sections = ("forecasting", "reasoning", "reasoning_ci", "history", "retrieval", "latency_ms")
    for section in (*sections, "llm"):
        values = data.get(section)
        if not isinstance(values, dict):
            continue
        for key, value in values.items():
            if isinstance(value, float):
                text = f"{value:,.4g}"
            elif isinstance(value, list):  # an interval
                text = "–".join(f"{v:,.4g}" for v in value)
            else:
                text = str(value)
            grid.add_row(f"{section}.{key}", text)
    grid.add_row("seconds", f"{data['seconds']}")
    Console().print(grid)


@bench_app.command("compare")
@exit_on_error
def compare_cmd(
    before: Annotated[
        Path,
        typer.Argument(
            help="Run A: a `bench run --details` or `bench forecast|impute --details` file."
        ),
    ],
    after: Annotated[
        Path, typer.Argument(help="Run B: the same split, run with the change (may be A's file).")
    ],
    model_a: Annotated[
        str | None, typer.Option(help="Forecast / impute details: run A's model, if several.")
    ] = None,
    model_b: Annotated[
        str | None, typer.Option(help="Forecast / impute details: run B's model, if several.")
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the comparison here.")
    ] = None,
) -> None:
    """Tell whether run B really scores differently from run A (same items, paired).

    QA runs: the reasoning items of two `bench run --details` files, matched by id; both
    runs' accuracy and F1, B minus A with a 95% paired-bootstrap interval, how many items
    only one of them got right, McNemar's exact p-value on those, and the Brier score of
    the stated probabilities per kind, B minus A with its paired interval. Forecasting and
    imputation runs: the cells both scored; MAE and MRE, B minus A with a 95% interval
    that resamples whole series. An interval that holds 0 means the split cannot tell the
    two runs apart.
    """
    from foretab.bench.forecast.cell_compare import compare_cell_files, is_cell_details

    if is_cell_details(before) and is_cell_details(after):
        cells = compare_cell_files(before, after, model_a, model_b)
        _print_comparison(
            f"bench compare: {cells.cells} cells of {cells.series} series in both runs",
            cells.level,
            [("MAE", cells.mae, cells.mae_change, 2), ("MRE", cells.mre, cells.mre_change, 5)],
            # As "only this run right" for QA: the cells where each run's error is smaller.
            ("cells this run got closer", f"{cells.worse:,}", f"{cells.better:,}"),
        )
        data: dict[str, object] = cells.to_dict()
    else:
        from foretab.bench.qa.significance import compare_details

        result = compare_details(before, after)
        _print_comparison(
            f"bench compare: {result.items} reasoning items in both runs",
            result.level,
            [("accuracy", result.accuracy, result.accuracy_change, 2),
             ("F1", result.f1, result.f1_change, 2)],
            ("only this run right", str(result.only_a_right), str(result.only_b_right)),
        )  # fmt: skip
        Console().print(f"McNemar exact p = {result.mcnemar_p:.4g}")
        data = result.to_dict()
        data["brier"] = _print_brier(before, after)
    if json_out is not None:
        import json

        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def _print_brier(before: Path, after: Path) -> list[dict[str, object]]:
    """The paired Brier change per kind of stated probability (issue 30), if any."""
    from dataclasses import asdict

    from foretab.bench.qa.reliability import compare_brier, read_stated

    rows = compare_brier(read_stated(before), read_stated(after))
    if not rows:
        return []
    grid = Table(title="Brier score of the stated probabilities (lower is better)")
    for column in ("kind", "items", "A", "B", f"B − A ({rows[0].level:.0%} interval)"):
        grid.add_column(column, justify="left" if column == "kind" else "right")
    for row in rows:
        change, low, high = row.change
        grid.add_row(
            row.kind, f"{row.items:,}", f"{row.brier[0]:.4f}", f"{row.brier[1]:.4f}",
            f"{change:+.4f} ({low:+.4f} to {high:+.4f})",
        )  # fmt: skip
    Console().print(grid)
    return [asdict(row) for row in rows]


def _print_comparison(
    title: str,
    level: float,
    scores: list[tuple[str, tuple[float, float], tuple[float, float, float], int]],
    counts: tuple[str, str, str],
) -> None:
    grid = Table(title=title)
    grid.add_column("")
    grid.add_column("A", justify="right")
    grid.add_column("B", justify="right")
    grid.add_column(f"B − A ({level:.0%} interval)", justify="right")
    for name, (a, b), (change, low, high), digits in scores:
        grid.add_row(
            name,
            f"{a:,.{digits}f}",
            f"{b:,.{digits}f}",
            f"{change:+,.{digits}f} ({low:+,.{digits}f} to {high:+,.{digits}f})",
        )
    grid.add_row(*counts, "")
    Console().print(grid)


@bench_app.command("report")
@exit_on_error
def report_cmd(
    runs: Annotated[
        list[Path], typer.Argument(help="Run files written by `foretab bench run --json`.")
    ],
    out: Annotated[
        Path, typer.Option("--out", help="Markdown file; the PNG chart goes beside it.")
    ],
) -> None:
    """Write a Table-3-style markdown report and a Figure-3-style chart from several runs.

    Runs of `foretab bench databench --json` give the table-QA ablation table instead.
    """
    from foretab.bench.tableqa.databench import is_databench_run

    if runs and all(is_databench_run(r) for r in runs):
        from foretab.bench.tableqa.databench import ablation_markdown, load_run

        out.write_text(ablation_markdown([load_run(r) for r in runs]), encoding="utf-8")
        Console().print(f"Wrote {out}")
        return
    from foretab.bench.qa.report import load_runs, write_report

    md, png = write_report(load_runs(runs), out)
    Console().print(f"Wrote {md} and {png}")
