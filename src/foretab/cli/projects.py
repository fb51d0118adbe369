"""``foretab projects``: list and search the projects a store holds, with their months."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer
from rapidfuzz import fuzz, process
from rich.console import Console
from rich.table import Table

from foretab.cli.common import DbOption, exit_on_error
from foretab.cli.main import app
from foretab.cli.safe_text import cell
from foretab.errors import QuestionError
from foretab.parse.entities import EntityIndex
from foretab.parse.text import has_cjk, normalize
from foretab.store import open_history


def place_filter(
    index: EntityIndex, city: str | None, district: str | None
) -> Callable[[str, str], bool]:
    """A predicate over (city, district) for ``--city`` / ``--district`` short forms."""
    outers: set[str] | None = None
    districts: set[tuple[str, str]] | None = None
    if city:
        found, _ = index.places_named(city)
        if not found:
            raise QuestionError(
                f"unknown city {city!r}; the store's cities are {', '.join(sorted(index.outers))}"
            )
        outers = set(found)
    if district:
        _, found_d = index.places_named(district)
        if outers is not None:
            found_d = [d for d in found_d if d[0] in outers]
        if not found_d:
            raise QuestionError(
                f"unknown district {district!r}; `foretab tables --db DB` lists the districts"
            )
        districts = set(found_d)
    return lambda c, d: (
        (outers is None or c in outers) and (districts is None or (c, d) in districts)
    )


@app.command()
@exit_on_error
def projects(
    db: DbOption,
    city: Annotated[str | None, typer.Option(help="Only this city ('Nanjing', '南京市').")] = None,
    district: Annotated[
        str | None, typer.Option(help="Only this district ('Jiangning', '江宁区', 'Baoan').")
    ] = None,
    search: Annotated[
        str | None,
        typer.Option(help="Projects whose English or Chinese name is close to this text."),
    ] = None,
    limit: Annotated[int, typer.Option(help="At most this many rows (0 = all).")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list.")] = False,
) -> None:
    """List and search projects with their first and last month and months of data."""
    with open_history(db) as store:
        entries = store.entities()
    index = EntityIndex(entries)
    keep = place_filter(index, city, district)
    rows = [e for e in entries if keep(e.outer, e.inner)]
    if search:
        if has_cjk(search):
            rows = [e for e in rows if any(search.strip() in a for a in e.aliases)]
        else:
            names = [normalize(e.name) for e in rows]
            hits = process.extract(
                normalize(search), names, scorer=fuzz.WRatio, limit=None, score_cutoff=85
            )
            rows = [rows[i] for _, _, i in sorted(hits, key=lambda h: (-h[1], h[2]))]
    total = len(rows)
    if limit:
        rows = rows[:limit]
    if as_json:
        from foretab.core.schema import dumps_plain

        typer.echo(
            dumps_plain(
                [
                    {
                        "project": e.name,
                        "name_zh": next((a for a in e.aliases if has_cjk(a)), None),
                        "city": e.outer,
                        "district": e.inner,
                        "first_month": e.first_month.iso,
                        "last_month": e.last_month.iso,
                        "months": e.n_months,
                    }
                    for e in rows
                ],
                ensure_ascii=False,
            )
        )
        return
    table = Table(
        title=f"{total} projects" + (f" (first {len(rows)})" if total > len(rows) else "")
    )
    for column in ("project", "Chinese", "district", "city", "first", "last", "months"):
        table.add_column(column, justify="right" if column == "months" else "left")
    for e in rows:
        zh = next((a for a in e.aliases if has_cjk(a)), "")
        # Names are data: printed as text, never read as markup or control sequences.
        values = (e.name, zh, e.inner, e.outer, e.first_month.iso, e.last_month.iso, e.n_months)
        table.add_row(*(cell(v) for v in values))
    Console().print(table)
