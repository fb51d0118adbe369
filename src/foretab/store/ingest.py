"""``foretab ingest``: validate a long table, build the history and future stores, swap them in.

Nothing is written until the whole input has been checked; the new stores are built
completely (a new generation: DuckDB files, or one PostgreSQL schema per database) before
one step makes them current (a rename, or one PostgreSQL commit), so a failure never
leaves a store half-written or a mix of two ingests.
"""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

import foretab
from foretab.core.months import Month
from foretab.corpus.schema import CorpusSchema, default_schema
from foretab.errors import IngestError, StoreError
from foretab.store.layout import SideLayout, split
from foretab.store.location import StoreLocation
from foretab.store.naming import GENERATION_KEY, SCHEMA_KEY, SIDE_KEY
from foretab.store.swap import swap_in
from foretab.store.validate import MAX_INPUT_BYTES, CleanCorpus, clean, read_table
from foretab.store.writers import write_duckdb

TableProgress = Callable[[str, int, int], None]  # (table name, done, total)


@dataclass(frozen=True, slots=True)
class IngestSummary:
    """What an ingest built."""

    location: StoreLocation
    reference_month: Month | None
    history_tables: int
    future_tables: int
    projects: int  # entities of the innermost level (projects, stock symbols, …)
    history_months: int
    future_months: int
    history_rows: int
    future_rows: int
    duplicates_dropped: int
    seconds: float
    entity_plural: str = "projects"  # the schema's name for them


def ingest_path(
    path: str | Path,
    db: str,
    reference_month: Month | None = None,
    *,
    schema: CorpusSchema | None = None,
    progress: TableProgress | None = None,
    max_parquet_bytes: int = MAX_INPUT_BYTES,
) -> IngestSummary:
    """Ingest a CSV (gzip allowed) or Parquet file into the store at ``db``.

    ``schema`` says which columns hold the entity levels, the month and the measures, and
    how tables are named; the real-estate schema by default. ``max_parquet_bytes``:
    ``read_table``'s.
    """
    path = Path(path)
    schema = schema or default_schema()
    # No name kept for the cleaned corpus here: ``_ingest`` frees it before the entity index.
    return _ingest(
        clean(read_table(path, max_parquet_bytes), str(path), schema),
        db,
        reference_month,
        str(path),
        progress,
        schema,
    )


def ingest_frame(
    frame: pd.DataFrame,
    db: str,
    reference_month: Month | None = None,
    *,
    source: str = "<dataframe>",
    schema: CorpusSchema | None = None,
    progress: TableProgress | None = None,
) -> IngestSummary:
    """Ingest an in-memory long table (same columns as a file)."""
    schema = schema or default_schema()
    raw = frame.copy()
    textual_columns = {lv.column for lv in schema.levels} | {schema.time.column}
    textual_columns |= {m.column for m in schema.measures if m.integer}
    for col in raw.columns:
        textual = col in textual_columns or raw[col].dtype == object
        if textual and not pd.api.types.is_datetime64_any_dtype(raw[col]):
            raw[col] = raw[col].astype("string").fillna("")
    return _ingest(clean(raw, source, schema), db, reference_month, source, progress, schema)


def _ingest(
    corpus: CleanCorpus,
    db: str,
    reference: Month | None,
    source: str,
    progress: TableProgress | None,
    schema: CorpusSchema,
) -> IngestSummary:
    started = time.perf_counter()
    location = StoreLocation.parse(db)
    reference = _reference_in_range(corpus, reference, source)
    history, future = split(corpus, reference, schema)
    meta = {
        SCHEMA_KEY: schema.to_json(),
        # Both sides of one ingest share it: a reader can tell a mix from a store.
        GENERATION_KEY: uuid.uuid4().hex,
        "reference_month": reference.iso if reference else "",
        "source": Path(source).name,
        "ingested_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "foretab_version": foretab.__version__,
    }
    total = len(history.tables) + (len(future.tables) if future else 0)
    done = 0

    def step(name: str) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(name, done, total)

    if location.backend == "duckdb":
        _swap_duckdb(location, history, future, meta, step)
    else:
        _swap_postgres(location, history, future, meta, step)
    frame = corpus.frame
    summary = IngestSummary(
        location=location,
        reference_month=reference,
        history_tables=len(history.tables),
        future_tables=len(future.tables) if future else 0,
        projects=int(frame[["city", "district", "project"]].drop_duplicates().shape[0]),
        history_months=int(history.rows["month"].nunique()),
        future_months=int(future.rows["month"].nunique()) if future else 0,
        history_rows=history.n_rows,
        future_rows=future.n_rows if future else 0,
        duplicates_dropped=corpus.duplicates_dropped,
        seconds=0.0,
        entity_plural=schema.leaf.plural_name,
    )
    # The corpus and both sides' rows go first: at 100x they are most of ingest's 7.4 GB,
    # and the entity index is built from the store.
    del corpus, frame, history, future
    _save_entity_index(location)
    return replace(summary, seconds=time.perf_counter() - started)


def _save_entity_index(location: StoreLocation) -> None:
    """Save the new generation's entity index with it, so an engine loads it when it opens.

    Like the model training saves, it goes into the generation just made current; it
    records that generation, so a reader of another one never uses it.
    """
    # Imported here: the index is the question parser's, and the store package is below it.
    from foretab.parse.entity_file import save_entity_index
    from foretab.store.stores import open_history

    with open_history(location) as store:
        save_entity_index(store)


def _reference_in_range(corpus: CleanCorpus, reference: Month | None, source: str) -> Month:
    """The reference month: the data's last month by default, else one inside its range."""
    first, last = Month.parse(corpus.frame["month"].min()), Month.parse(corpus.frame["month"].max())
    if reference is None:
        return last
    if not first <= reference <= last:
        raise IngestError(
            f"{source}: the reference month {reference.iso} is outside the data's range "
            f"{first.iso}..{last.iso}. Choose a --reference-month in that range, or omit it "
            f"for the last month ({last.iso})."
        )
    return reference


def _swap_duckdb(
    location: StoreLocation,
    history: SideLayout,
    future: SideLayout | None,
    meta: dict[str, str],
    step: Callable[[str], None],
) -> None:
    target = Path(location.history)
    if target.is_dir() and not target.is_symlink():
        raise StoreError(
            f"--db {target} is a folder; pass a file path such as {target}/corpus.duckdb."
        )
    target.parent.mkdir(parents=True, exist_ok=True)

    def build(history_file: Path, future_file: Path) -> None:
        write_duckdb(str(history_file), history, {**meta, SIDE_KEY: "history"}, step)
        if future is not None:
            write_duckdb(str(future_file), future, {**meta, SIDE_KEY: "future"}, step)

    swap_in(location, build)


def _swap_postgres(
    location: StoreLocation,
    history: SideLayout,
    future: SideLayout | None,
    meta: dict[str, str],
    step: Callable[[str], None],
) -> None:
    from foretab.store import pg_swap

    pg_swap.swap_in(location, history, future, meta, step)
