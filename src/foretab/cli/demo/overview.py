"""What a store holds, per city.

Read back through the store API, not taken from the generator, so the demo shows what the
question engine will actually see.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from foretab.cli.safe_text import cell
from foretab.core.months import Month
from foretab.store import CatalogEntry, EntityEntry, open_future, open_history
from foretab.store.location import StoreLocation


@dataclass(frozen=True, slots=True)
class CityOverview:
    """One city of a store: counts on the history and future sides."""

    city: str
    districts: int
    projects: int
    history_tables: int
    future_tables: int
    history_rows: int
    future_rows: int
    first_month: Month
    last_month: Month


@dataclass(frozen=True, slots=True)
class StoreOverview:
    """A whole store: per-city lines, totals and the reference month."""

    location: str
    future_location: str | None
    reference_month: Month | None
    cities: tuple[CityOverview, ...]
    busiest_project: EntityEntry | None  # most history months: a good example to query

    @property
    def projects(self) -> int:
        """Distinct projects on either side."""
        return sum(c.projects for c in self.cities)

    @property
    def history_tables(self) -> int:
        """Tables in the history store."""
        return sum(c.history_tables for c in self.cities)

    @property
    def future_tables(self) -> int:
        """Tables in the future store."""
        return sum(c.future_tables for c in self.cities)

    @property
    def history_rows(self) -> int:
        """Observations in the history store."""
        return sum(c.history_rows for c in self.cities)

    @property
    def future_rows(self) -> int:
        """Observations in the future store."""
        return sum(c.future_rows for c in self.cities)

    @property
    def months(self) -> int:
        """Calendar months from the first observation to the last, both sides."""
        if not self.cities:
            return 0
        first = min(c.first_month for c in self.cities)
        last = max(c.last_month for c in self.cities)
        return last.minus(first) + 1


def summarize_store(db: str) -> StoreOverview:
    """Read the catalog and project lists of both sides of ``db``."""
    location = StoreLocation.parse(db)
    history = open_history(location)
    try:
        reference = history.reference_month
        generation = history.generation
        history_catalog = history.catalog()
        history_projects = history.entities()
    finally:
        history.close()
    future_catalog: list[CatalogEntry] = []
    future_projects: list[EntityEntry] = []
    # Only an ingest with a reference month that leaves later months builds a future store.
    if reference is not None:
        future = open_future(location, generation)
        try:
            future_catalog = future.catalog()
            future_projects = future.entities()
        finally:
            future.close()
    cities = sorted({e.outer for e in history_catalog} | {e.outer for e in future_catalog})
    lines = tuple(
        _city_line(city, history_catalog, future_catalog, history_projects, future_projects)
        for city in cities
    )
    busiest = max(history_projects, key=lambda p: (p.n_months, p.last_month), default=None)
    return StoreOverview(
        location=location.describe("history"),
        future_location=location.describe("future") if future_catalog else None,
        reference_month=reference,
        cities=lines,
        busiest_project=busiest,
    )


def _city_line(
    city: str,
    history_catalog: list[CatalogEntry],
    future_catalog: list[CatalogEntry],
    history_projects: list[EntityEntry],
    future_projects: list[EntityEntry],
) -> CityOverview:
    past = [e for e in history_catalog if e.outer == city]
    ahead = [e for e in future_catalog if e.outer == city]
    projects = [p for p in history_projects + future_projects if p.outer == city]
    return CityOverview(
        city=city,
        districts=len({e.inner for e in past + ahead}),
        projects=len({(p.inner, p.name) for p in projects}),
        history_tables=len(past),
        future_tables=len(ahead),
        history_rows=sum(e.rows for e in past),
        future_rows=sum(e.rows for e in ahead),
        first_month=min(p.first_month for p in projects),
        last_month=max(p.last_month for p in projects),
    )


def render_overview(overview: StoreOverview, console: Console) -> None:
    """The per-city table and the totals."""
    table = Table(title=f"Demo corpus in {escape(overview.location)}", title_justify="left")
    table.add_column("city")
    for header in ("districts", "projects", "history\ntables", "history\nrows"):
        table.add_column(header, justify="right")
    table.add_column("future\ntables", justify="right")
    table.add_column("future\nrows", justify="right")
    for line in overview.cities:
        table.add_row(
            cell(line.city),
            str(line.districts),
            str(line.projects),
            str(line.history_tables),
            f"{line.history_rows:,}",
            str(line.future_tables),
            f"{line.future_rows:,}",
        )
    table.add_section()
    table.add_row(
        "all",
        str(sum(c.districts for c in overview.cities)),
        str(overview.projects),
        str(overview.history_tables),
        f"{overview.history_rows:,}",
        str(overview.future_tables),
        f"{overview.future_rows:,}",
        style="bold",
    )
    console.print(table)
    if overview.cities:
        first = min(c.first_month for c in overview.cities)
        last = max(c.last_month for c in overview.cities)
        console.print(f"Months: {overview.months} ({first.iso} to {last.iso}).")
    if overview.reference_month is None:
        console.print("Reference month: none (every month is history).")
    else:
        console.print(
            f"Reference month: [bold]{overview.reference_month.label}[/bold] "
            f"({overview.reference_month.iso}). History is up to it; the future store "
            f"({escape(overview.future_location or 'empty')}) holds the months after it "
            "and is never visible to the question engine."
        )
