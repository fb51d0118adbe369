"""How validated observations become tables: one per district, city and year, per side."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from foretab.core.months import Month
from foretab.corpus.schema import CorpusSchema, TableColumns, default_schema, snake
from foretab.store.catalog import CatalogEntry
from foretab.store.validate import CleanCorpus

# Extra input columns that describe the place rather than the project-month; they go to the
# projects table (for entity linking) as well as staying on every row.
ALIAS_COLUMNS = {"project_zh": "project_zh", "city_zh": "city_zh", "district_zh": "district_zh"}


@dataclass(frozen=True, slots=True)
class SideLayout:
    """Everything one store (history or future) will hold."""

    rows: pd.DataFrame  # _table, <leaf>, month (YYYY-MM-01), <measures>, extras…
    tables: tuple[CatalogEntry, ...]
    projects: pd.DataFrame  # city, district, project, first_month, last_month, n_months, *_zh
    extra_columns: tuple[str, ...]  # SQL column names of the extras, in order
    columns: TableColumns

    @property
    def n_rows(self) -> int:
        return len(self.rows)


def extra_column_names(extras: tuple[str, ...], standard: tuple[str, ...]) -> dict[str, str]:
    """Input column → SQL column name (snake case, never clashing with the standard ones)."""
    names: dict[str, str] = {}
    for col in extras:
        name = snake(col) or "extra"
        if name in standard or name[0].isdigit():
            name = f"extra_{name}"
        while name in names.values():
            name += "_"
        names[col] = name
    return names


def split(
    corpus: CleanCorpus, reference: Month | None, schema: CorpusSchema | None = None
) -> tuple[SideLayout, SideLayout | None]:
    """History (months ≤ R; everything without R) and future (months > R, or None)."""
    schema = schema or default_schema()
    frame = corpus.frame
    if reference is None:
        return _side(frame, corpus.extra_columns, schema), None
    is_history = frame["month"] <= reference.iso
    history = _side(frame[is_history], corpus.extra_columns, schema)
    future_rows = frame[~is_history]
    future = _side(future_rows, corpus.extra_columns, schema) if len(future_rows) else None
    return history, future


def _side(frame: pd.DataFrame, extras: tuple[str, ...], schema: CorpusSchema) -> SideLayout:
    columns = schema.columns
    names = extra_column_names(extras, columns.standard)
    year = frame["month"].str.slice(0, 4).astype(int)
    keys = pd.DataFrame({"city": frame["city"], "district": frame["district"], "year": year})
    specs: list[CatalogEntry] = []
    grouped = keys.groupby(["city", "district", "year"])
    for (city, district, yr), size in grouped.size().items():
        slot_values = {"outer": str(city), "inner": str(district)}
        groups = {name: slot_values[slot] for slot, name in schema.group_slots}
        name = schema.table_name(groups, int(yr))
        specs.append(
            CatalogEntry(
                name, schema.caption(groups, int(yr)), str(city), str(district), int(yr), int(size)
            )
        )
    # Each row's table by its group's number: assigning group by group into one column
    # copied the column per table (quadratic: hours at 100x the corpus's 30,590 tables).
    group = grouped.ngroup().to_numpy()
    table_names = np.array([spec.table_name for spec in specs] + [""], dtype=object)
    table_of_row = table_names[np.where(group >= 0, group, len(specs))]
    rows = pd.DataFrame(
        {
            "_table": table_of_row,
            columns.entity: frame["project"],
            columns.month: frame["month"] + "-01",
            columns.value: frame["avg_price"],
        }
    )
    if columns.summed:
        rows[columns.summed] = frame["units_sold"]
    for col, sql_name in names.items():
        rows[sql_name] = frame[col]
    return SideLayout(
        rows=rows.reset_index(drop=True),
        tables=tuple(sorted(specs, key=lambda s: (s.outer, s.inner, s.year))),
        projects=_projects(frame),
        extra_columns=tuple(names.values()),
        columns=columns,
    )


def _projects(frame: pd.DataFrame) -> pd.DataFrame:
    # Months as integers (YYYYMM): min/max of a string column fall back to a Python loop
    # per group in pandas, seconds on the real corpus.
    month = frame["month"]
    number = month.str.slice(0, 4).astype(int) * 100 + month.str.slice(5, 7).astype(int)
    keyed = pd.DataFrame(
        {"city": frame["city"], "district": frame["district"], "project": frame["project"]}
    ).assign(number=number.to_numpy())
    grouped = keyed.groupby(["city", "district", "project"], sort=True)["number"]
    projects = grouped.agg(first_month="min", last_month="max", n_months="count")
    for col in ("first_month", "last_month"):
        value = projects[col]
        projects[col] = (
            (value // 100).astype(str).str.zfill(4)
            + "-"
            + (value % 100).astype(str).str.zfill(2)
            + "-01"
        )
    projects = projects.reset_index()
    key = ["city", "district", "project"]
    present = [c for c in ALIAS_COLUMNS if c in frame.columns]
    aliases = frame[key + present].drop_duplicates(key)  # first alias seen per project
    projects = projects.merge(aliases, on=key, how="left")
    for col in ALIAS_COLUMNS:
        projects[col] = projects[col].fillna("") if col in projects.columns else ""
    return projects
