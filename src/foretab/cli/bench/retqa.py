"""``foretab bench retqa``: accuracy on RETQA's historical questions, per intent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from foretab.cli.common import DbOption, exit_on_error
from foretab.cli.main import bench_app


@bench_app.command("retqa")
@exit_on_error
def retqa(
    db: DbOption,
    dataset: Annotated[
        Path, typer.Option(help="A RETQA split: ../shared/data/retqa/validation.jsonl.")
    ],
    limit: Annotated[int, typer.Option(help="Only the first N questions (0 = all).")] = 0,
    errors: Annotated[
        Path | None, typer.Option(help="Write every wrong answer here (JSON lines).")
    ] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the figures here.")] = None,
) -> None:
    """Score the engine on RETQA questions by the docs/design.md §5 rule and print a per-intent table.

    Use a store that holds every month as history (`foretab ingest ... --reference-month
    2022-12`).
    """
    from foretab.bench.qa.retqa import by_intent, load_retqa, score
    from foretab.engine import Engine

    items = load_retqa(dataset)
    if limit:
        items = items[:limit]
    with Engine.open(db, future="none") as engine:
        aliases: dict[str, str] = {}
        for ref in engine.context.index.refs:
            if ref.name_zh:
                aliases[ref.name] = ref.name_zh
        results = score(items, lambda q: engine.ask(q).answer, lambda n: aliases.get(n, n))
    table = Table(title=f"RETQA {dataset.name}: {len(results)} questions")
    for column in ("intent", "right", "total", "accuracy"):
        table.add_column(column, justify="left" if column == "intent" else "right")
    figures = by_intent(results)
    for intent, (right, total) in sorted(figures.items(), key=lambda kv: kv[0] == "all"):
        table.add_row(intent, str(right), str(total), f"{right / total:.1%}")
    Console().print(table)
    if errors is not None:
        with errors.open("w", encoding="utf-8") as out:
            for r in results:
                if not r.right:
                    row = {"id": r.item.id, "question": r.item.question, "gold": r.item.gold,
                           "got": r.got}  # fmt: skip
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
    if json_out is not None:
        json_out.write_text(
            json.dumps({k: {"right": a, "total": b} for k, (a, b) in figures.items()}, indent=1),
            encoding="utf-8",
        )
