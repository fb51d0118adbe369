"""``foretab ask``: answer one question over a store."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from foretab.cli.common import ERROR_EXIT_CODE, DbOption, exit_on_error
from foretab.cli.heap import resume_after_opening
from foretab.cli.main import app
from foretab.cli.options import (
    DEFAULT_DECISION_NAME,
    DecisionOption,
    engine_options,
    open_engine,
)
from foretab.cli.safe_text import cell
from foretab.engine.choice import EngineChoice
from foretab.forecast.lightgbm_import import import_for_prediction
from foretab.limits import check_question

# A question is a sentence: longer input only costs parse time (16 KB took 12.7 s).

if TYPE_CHECKING:
    from foretab.core.answer import Answer
    from foretab.core.plan import Plan


@app.command()
@exit_on_error
@engine_options
def ask(
    question: Annotated[
        str | None, typer.Argument(help="The question, in English or Chinese.")
    ] = None,
    *,
    db: DbOption,
    file: Annotated[
        Path | None,
        typer.Option(
            "--file",
            help="Answer every question of a file with one warm engine: a .txt (one question "
            "a line) or a .jsonl (a string or an object with 'question' a line); one line "
            "out per question (JSON with --json), one error object per failed line.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    future: Annotated[
        str,
        typer.Option(
            help="Where future prices come from: 'model' (the store's trained forecaster), "
            "'oracle' (the future store; evaluation only) or 'none' (last observed price).",
        ),
    ] = "model",
    model: Annotated[
        str | None,
        typer.Option(help="Forecaster to use with --future model (default: the trained one)."),
    ] = None,
    level: Annotated[
        float,
        typer.Option(help="Level of the forecast intervals, between 0 and 1 (0.8: 80%)."),
    ] = 0.8,
    decision: DecisionOption = DEFAULT_DECISION_NAME,
    engine: EngineChoice,
) -> None:
    """Answer a question about past or future prices, with the plan, tables, SQL and answer.

    Errors (unknown project, no time expression, ...) exit with code 2; with --json they are
    printed as {"error": {"type", "message", "suggestions"}}. --engine timefore, vanilla
    and hybrid need an LLM endpoint (--llm-base-url, --llm-model); --json then also shows
    every prompt, reply, tool call and retry in "steps".
    """
    if future not in ("model", "oracle", "none"):
        raise typer.BadParameter("use model, oracle or none", param_hint="--future")
    if (question is None) == (file is None):
        raise typer.BadParameter("give one question, or --file FILE", param_hint="QUESTION")
    options = _forecast_options(future, model, level, decision)
    if future == "model":
        # The guard's worker is opening the store meanwhile (over a second at 100x the
        # corpus) and this process would wait for it: it imports LightGBM now, which a
        # forecast needs (nothing is done in a process not declared predict-only).
        import_for_prediction()
    if file is not None:
        failed = _ask_file(file, db, engine, as_json, future=future, model=model, **options)
        if failed:
            raise typer.Exit(ERROR_EXIT_CODE)
        return
    assert question is not None
    check_question(question)
    with open_engine(db, engine, future=future, model=model, **options) as built:
        resume_after_opening()
        answer = built.ask(question)
    if as_json:
        from foretab.core.schema import dumps

        typer.echo(dumps(answer.to_doc()))
        return
    out = Console()
    # Names come from the store: printed as plain text, never as markup or raw controls.
    out.print(cell(answer.text, "bold"))
    out.print(cell(f"answer: {json.dumps(answer.answer, ensure_ascii=False)}"))
    details = Table(show_header=False, box=None)
    plan = answer.plan
    from foretab.core.canonical import canonical

    details.add_row("asked", cell(canonical(plan)))
    details.add_row("task", f"{plan.task.value} ({plan.aggregate.value}, {plan.comparison.value})")
    details.add_row(plan.wording.entities or "entities", cell(_entities_line(plan)))
    details.add_row(
        "window",
        cell(f"{plan.window.first.label} – {plan.window.last.label}  «{plan.window.expression}»"),
    )
    details.add_row("tables", cell("\n".join(answer.trace.tables) or "-"))
    details.add_row("future", cell(answer.trace.future_source))
    if answer.trace.llm_calls:
        calls = answer.trace.llm_calls
        tokens = sum(c.prompt_tokens + c.completion_tokens for c in calls)
        details.add_row("llm", f"{len(calls)} calls, {tokens} tokens ({answer.engine})")
    for line in explain(answer):
        details.add_row("", cell(line))  # names the projects: text, not markup
    details.add_row("ms", ", ".join(f"{k} {v * 1000:.1f}" for k, v in answer.trace.timings.items()))
    out.print(details)


def read_questions(path: Path) -> list[str]:
    """The questions of a batch file: .jsonl lines (a string or {"question": ...}), else text lines."""
    from foretab.errors import QuestionError

    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise QuestionError(f"cannot read the questions file {str(path)!r}: {error}") from None
    questions = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if path.suffix.lower() == ".jsonl":
            try:
                item = json.loads(line)
            except ValueError:
                raise QuestionError(f"{path.name} line {number} is not JSON") from None
            text = item.get("question") if isinstance(item, dict) else item
            if not isinstance(text, str):
                raise QuestionError(
                    f"{path.name} line {number}: expected a string or an object with 'question'"
                )
            questions.append(text)
        else:
            questions.append(line.strip())
    return questions


def _ask_file(path: Path, db: str, engine: EngineChoice, as_json: bool, **options: object) -> int:
    """Answer each question of ``path`` with one engine; returns how many failed."""
    from foretab.core.schema import dumps
    from foretab.errors import ForetabError

    questions = read_questions(path)
    failed = 0
    with open_engine(db, engine, **options) as built:
        resume_after_opening()
        for text in questions:
            try:
                check_question(text)
                answer = built.ask(text)
            except ForetabError as error:
                failed += 1
                doc = {"question": text, "error": error.to_dict()}
                typer.echo(
                    json.dumps(doc, ensure_ascii=False)
                    if as_json
                    else f"{text}\tError: {error.message}"
                )
                continue
            if as_json:
                typer.echo(dumps(answer.to_doc()))
            else:
                typer.echo(
                    f"{text}\t{json.dumps(answer.answer, ensure_ascii=False)}\t{answer.text}"
                )
    return failed


def _entities_line(plan: Plan) -> str:
    """``Name (inner, outer)`` of each entity asked about; a one-level corpus has no places."""
    shown = []
    for ref in plan.entities:
        places = ", ".join(p for p in (ref.inner, ref.outer) if p)
        shown.append(f"{ref.name} ({places})" if places else ref.name)
    return "; ".join(shown) or "-"


def explain(answer: Answer) -> list[str]:
    """A few short lines saying what the forecast was built from and how sure it is."""
    forecast = answer.forecast
    lines = []
    if forecast.level is not None:
        how = {
            "backtest": "calibrated on a rolling backtest",
            "backtest-per-series": "calibrated on a rolling backtest, scaled to each "
            "series' own volatility",
            "in-sample": "in-sample residuals",
            "quantile-boosters": "the units model's 10% and 90% quantile boosters with its "
            "row probability (not calibrated)",
        }
        method = how.get(forecast.interval_method, forecast.interval_method or "")
        lines.append(f"{forecast.level:.0%} intervals" + (f", {method}" if method else ""))
    if forecast.drift_per_month:
        from foretab.forecast.calibrate import DRIFT_ORIGINS

        lines.append(
            f"moved by the recent drift, {math.expm1(forecast.drift_per_month):+.2%} a month "
            f"(what a model fitted before the last {DRIFT_ORIGINS} months got wrong on them)"
        )
    for ref, basis in forecast.basis.items():
        imputed = f", {basis.imputed_months} imputed" if basis.imputed_months else ""
        last = f", last observed {basis.last_observed.label}" if basis.last_observed else ""
        lines.append(f"{ref.name}: {basis.note or basis.months_used}{imputed}{last}")
    if answer.probability is not None:
        lines.append(f"probability of this answer {answer.probability:.0%} ({answer.decision})")
    from foretab.core.trace import AnalyzeStep

    how = next((s.uncertainty for s in answer.trace.steps if isinstance(s, AnalyzeStep)), "")
    if how:
        lines.append(how)
    return lines


def _forecast_options(
    future: str, model: str | None, level: float, decision: str
) -> dict[str, object]:
    """The interval level and decision rule, as the stages that use them.

    Defaults pass nothing: the engine then loads its model only for questions that need
    one (a history question works on a store without a trained model).
    """
    from foretab.analyze.probability import DEFAULT_DECISION
    from foretab.forecast.source import DEFAULT_LEVEL

    options: dict[str, object] = {}
    if decision != DEFAULT_DECISION:
        from foretab.engine.rules import StoreRuleAnalyzer

        options["analyzer"] = StoreRuleAnalyzer(decision)
    if future == "model" and level != DEFAULT_LEVEL:
        from foretab.forecast.source import ModelSource

        options["future_source"] = lambda e: ModelSource.for_store(e.store, model, level=level)
    return options
