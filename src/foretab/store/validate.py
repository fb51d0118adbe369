"""Read and check an ingest file; every problem names the file, row and column."""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from foretab.corpus.schema import (
    SLOTS,
    STORE_COLUMNS,
    CorpusSchema,
    Measure,
    TimeColumn,
    default_schema,
    snake,
)
from foretab.errors import IngestError

KEY = ("city", "district", "project", "month")
MAX_IDENTIFIER = 63  # PostgreSQL truncates longer identifiers; refuse rather than collide.
_MONTH = r"^\d{4}-(0[1-9]|1[0-2])$"

# Input limits (docs/safety.md): refused early with a clear message, never a crash later.
MAX_INPUT_BYTES = 256 * 2**20  # the data as read (after gzip); the shared corpus is ~10 MiB
# Parquet: rows x columns from the footer, before reading (8 bytes a cell once decoded).
MAX_PARQUET_CELLS = MAX_INPUT_BYTES // 8
PARQUET_BATCH_ROWS = 65_536
MAX_HEADER_BYTES = 64 * 2**10
MAX_COLUMNS = 64
MAX_NAME_CHARS = 200  # city, district, project
MAX_EXTRA_CHARS = 1_000  # any other text column
FIRST_YEAR, LAST_YEAR = 1900, 2100
MAX_VALUE = 1e12
MAX_UNITS = 2**31 - 1  # stored as INTEGER


def _check_size(path: Path, is_gzip: bool) -> None:
    """Refuse input whose data (after gzip) exceeds ``MAX_INPUT_BYTES``, reading no more."""
    if not is_gzip:
        size = path.stat().st_size
    else:
        size = 0
        with gzip.open(path, "rb") as handle:
            while size <= MAX_INPUT_BYTES and (chunk := handle.read(2**20)):
                size += len(chunk)
    if size > MAX_INPUT_BYTES:
        raise IngestError(
            f"{path}: more than {MAX_INPUT_BYTES // 2**20} MiB of data (after decompression); "
            "split the file into smaller ones."
        )


def _check_header(path: Path, is_gzip: bool) -> None:
    opener = gzip.open if is_gzip else open
    with opener(path, "rb") as handle:  # type: ignore[operator]
        header = handle.readline(MAX_HEADER_BYTES + 1)
    if len(header) > MAX_HEADER_BYTES:
        raise IngestError(
            f"{path}: the header row is longer than {MAX_HEADER_BYTES // 1024} KiB; expected "
            f"at most {MAX_COLUMNS} columns (city, district, project, month, avg_price, ...)."
        )
    columns = header.count(b",") + 1
    if columns > MAX_COLUMNS:
        raise IngestError(
            f"{path}: {columns} columns in the header; at most {MAX_COLUMNS} are accepted."
        )


@dataclass(frozen=True, slots=True)
class CleanCorpus:
    """Validated observations: one row per project-month, typed columns."""

    frame: pd.DataFrame  # city, district, project, month (YYYY-MM), avg_price, units_sold, extras
    extra_columns: tuple[str, ...]
    duplicates_dropped: int


def read_table(path: Path, max_parquet_bytes: int = MAX_INPUT_BYTES) -> pd.DataFrame:
    """Load a CSV (gzip allowed) or Parquet file as strings-as-read.

    ``max_parquet_bytes``: a Parquet file's limit once decoded (``foretab bench scale``
    raises it for the corpus it generated itself; a user's file keeps the default).
    """
    if not path.exists():
        raise IngestError(f"{path}: no such file.")
    if path.stat().st_size == 0:
        raise IngestError(f"{path}: the file is empty; expected a header row and data rows.")
    with path.open("rb") as handle:
        magic = handle.read(4)
    try:
        if magic == b"PAR1" or path.suffix.lower() in {".parquet", ".pq"}:
            return read_parquet_limited(path, max_parquet_bytes)
        is_gzip = magic[:2] == b"\x1f\x8b"
        name = path.name.lower()
        if is_gzip or name.endswith((".csv", ".csv.gz", ".tsv", ".txt")):
            if is_gzip:
                with gzip.open(path, "rb") as probe:
                    if not probe.read(1):
                        raise IngestError(f"{path}: the file is empty after decompression.")
            _check_header(path, is_gzip)
            _check_size(path, is_gzip)
            _check_fields(path, is_gzip)
            raw = pd.read_csv(
                path, dtype=str, keep_default_na=False, compression="gzip" if is_gzip else None
            )
            return _refuse_short_rows(raw, path)
    except IngestError:
        raise
    except (pd.errors.EmptyDataError, ValueError, OSError) as exc:
        raise IngestError(f"{path}: cannot be read as CSV or Parquet ({exc}).") from exc
    raise IngestError(
        f"{path}: unknown format; pass a .csv, .csv.gz or .parquet file in long format "
        "(city, district, project, month, avg_price[, units_sold])."
    )


def _check_fields(path: Path, is_gzip: bool) -> None:
    """Every row has exactly the header's number of fields, and no NUL character.

    pandas fills a short row's missing fields with '' (keep_default_na=False) and its C
    parser cuts a value at a NUL: both would change the data silently.
    """
    import csv

    opener = gzip.open if is_gzip else open
    with opener(path, "rb") as raw:  # type: ignore[operator]
        has_nul = any(b"\x00" in chunk for chunk in iter(lambda: raw.read(2**22), b""))
    with opener(path, "rt", encoding="utf-8", errors="replace", newline="") as handle:  # type: ignore[operator]
        reader = csv.reader(handle)
        try:
            header = next(reader, [])
            if any("\x00" in name for name in header):
                raise IngestError(f"{path}, row 1 (the header): a column name holds a NUL byte.")
            record = 0
            for fields in reader:
                if not fields:
                    continue  # a blank line, skipped as pandas skips it
                record += 1
                if len(fields) != len(header):
                    raise IngestError(
                        f"{path}, row {record + 1}: {len(fields)} fields where the header has "
                        f"{len(header)}; every row needs one value per column (quote values "
                        "that contain commas)."
                    )
                for name, value in zip(header, fields, strict=True) if has_nul else ():
                    if "\x00" in value:
                        raise IngestError(
                            f"{path}, row {record + 1}, column {name.strip()!r}: the value holds "
                            "a NUL byte; remove it from the file."
                        )
        except csv.Error as exc:
            raise IngestError(
                f"{path}, line {reader.line_num}: cannot be read as CSV ({exc})."
            ) from None


def _refuse_short_rows(raw: pd.DataFrame, path: Path) -> pd.DataFrame:
    """A row with fewer fields than the header reads as missing values: refuse it."""
    short = raw.isna().any(axis=1)
    if bool(short.any()):
        raise IngestError(
            f"{path}, row {_row(short.idxmax())}: fewer fields than the header has columns; "
            "every row needs one value per column (quote values that contain commas)."
        )
    return raw


def _check_parquet(
    path: Path, max_columns: int | None = MAX_COLUMNS, max_bytes: int = MAX_INPUT_BYTES
) -> None:
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    size = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    if max_columns is not None and meta.num_columns > max_columns:
        raise IngestError(f"{path}: {meta.num_columns} columns; at most {max_columns}.")
    cells = meta.num_rows * meta.num_columns
    if size > max_bytes or cells > max_bytes // 8:
        raise IngestError(
            f"{path}: {meta.num_rows:,} rows x {meta.num_columns} columns "
            f"({max(size, cells * 8) // 2**20:,} MiB) once decoded; at most "
            f"{max_bytes // 2**20} MiB ({max_bytes // 8:,} cells). Split the file."
        )


def read_parquet_limited(
    path: Path, max_bytes: int = MAX_INPUT_BYTES, max_columns: int | None = MAX_COLUMNS
) -> pd.DataFrame:
    """A Parquet file as a DataFrame, refused (``IngestError``) past ``max_bytes`` decoded.

    The footer's counts are checked first; then the file is read in batches with text
    columns kept dictionary-encoded, and each batch's decoded size is counted before it
    is expanded, so a small file that decodes to gigabytes (repeated long strings, runs
    of one value) is refused without being decoded, whatever its footer claims.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    _check_parquet(path, max_columns, max_bytes)
    try:
        schema = pq.ParquetFile(path).schema_arrow
        nested = [f.name for f in schema if pa.types.is_nested(f.type)]
        if nested:
            raise IngestError(
                f"{path}: column(s) {', '.join(nested)} hold lists or structs; expected one "
                "plain value per cell."
            )
        text = [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_binary(f.type)
                or pa.types.is_large_string(f.type) or pa.types.is_large_binary(f.type)]  # fmt: skip
        file = pq.ParquetFile(path, read_dictionary=text)
        decoded, batches = 0, []
        for batch in file.iter_batches(batch_size=PARQUET_BATCH_ROWS):
            columns = []
            for array in batch.columns:
                if pa.types.is_dictionary(array.type):
                    lengths = pc.binary_length(array.dictionary)
                    decoded += int(pc.sum(pc.take(lengths, array.indices)).as_py() or 0)
                    decoded += 8 * len(array)
                    if decoded <= max_bytes:
                        array = array.dictionary_decode()
                else:
                    decoded += array.nbytes
                columns.append(array)
            if decoded > max_bytes:
                raise IngestError(
                    f"{path}: more than {max_bytes // 2**20} MiB of data once decoded (the "
                    f"file is {path.stat().st_size:,} bytes); split the file."
                )
            batches.append(pa.RecordBatch.from_arrays(columns, names=batch.schema.names))
        table = pa.Table.from_batches(batches) if batches else file.read()
        return table.to_pandas()
    except IngestError:
        raise
    except (pa.ArrowException, MemoryError) as exc:
        raise IngestError(f"{path}: cannot be read as Parquet ({exc}).") from None


def clean(raw: pd.DataFrame, source: str, schema: CorpusSchema | None = None) -> CleanCorpus:
    """Check and type the schema's columns; raise ``IngestError`` at the first bad row.

    The result uses the engine's slot names (``city``, ``district``, ``project``; a slot the
    schema has no level for is empty), ``month`` and ``avg_price``/``units_sold`` for the
    primary and summed measures; messages name the input's own columns.
    """
    schema = schema or default_schema()
    if raw.empty:
        raise IngestError(f"{source}: no data rows; expected one row per {schema.leaf.name}-month.")
    raw = raw.rename(columns=lambda c: str(c).strip())
    summed = schema.summed
    required = [lv.column for lv in schema.levels] + [schema.time.column, schema.primary.column]
    if summed is not None and summed.required:
        required.append(summed.column)
    missing = [c for c in required if c not in raw.columns]
    if missing:
        optional = (
            f" ({summed.column} optional)" if summed is not None and not summed.required else ""
        )
        raise IngestError(
            f"{source}: missing column(s) {', '.join(missing)}; the {schema.name} schema needs "
            f"{', '.join(required)}{optional}. Map other column names with --schema FILE or "
            "--entity/--time/--measure."
        )
    if len(raw.columns) > MAX_COLUMNS:
        raise IngestError(f"{source}: {len(raw.columns)} columns; at most {MAX_COLUMNS}.")
    frame = pd.DataFrame(index=raw.index)
    for slot in SLOTS:
        level = schema.slot_level(slot)
        if level is None:
            frame[STORE_COLUMNS[slot]] = ""
            continue
        col = level.column
        text = raw[col].astype("string").str.strip()
        bad = text.isna() | (text == "")
        _fail_if(bad, source, col, raw[col], "is empty; every row needs a value")
        _fail_if(
            text.str.len() > MAX_NAME_CHARS,
            source,
            col,
            text.str.slice(0, 40) + "…",
            f"is longer than {MAX_NAME_CHARS} characters",
        )
        frame[STORE_COLUMNS[slot]] = text.astype(str)
    frame["month"] = _months(raw[schema.time.column], source, schema.time)
    frame["avg_price"] = _values(raw[schema.primary.column], source, schema.primary)
    if summed is not None and summed.column in raw.columns:
        frame["units_sold"] = _units(raw[summed.column], source, summed)
    else:
        frame["units_sold"] = pd.array([pd.NA] * len(raw), dtype="Int64")
    used = {*required, *(m.column for m in schema.measures)}
    aliases = {
        lv.alias_column: f"{STORE_COLUMNS[slot]}_zh"
        for slot in SLOTS
        if (lv := schema.slot_level(slot))
    }
    extras = tuple(c for c in raw.columns if c not in used)
    for col in extras:
        text = raw[col].astype("string").fillna("")
        _fail_if(
            text.str.len() > MAX_EXTRA_CHARS,
            source,
            col,
            text.str.slice(0, 40) + "…",
            f"is longer than {MAX_EXTRA_CHARS} characters",
        )
        frame[col] = text.astype(str)
    for col, alias in aliases.items():
        if col and col in raw.columns and alias not in frame.columns:
            frame[alias] = frame[col]  # the engine finds other names under its slot's alias
    frame, dropped = _deduplicate(frame, source, schema)
    _check_names(frame, source, schema)
    return CleanCorpus(frame.reset_index(drop=True), extras, dropped)


def _row(index: object) -> int:
    # Row numbers as a user sees them in the file: the header is row 1.
    return int(index) + 2  # type: ignore[call-overload]


def _fail_if(bad: pd.Series, source: str, column: str, values: pd.Series, why: str) -> None:
    if bool(bad.any()):
        first = bad.idxmax()
        raise IngestError(
            f"{source}, row {_row(first)}, column '{column}': value {values.loc[first]!r} {why}."
        )


def _months(values: pd.Series, source: str, time: TimeColumn) -> pd.Series:
    if pd.api.types.is_datetime64_any_dtype(values):
        return values.dt.strftime("%Y-%m")
    if time.format:
        # A date stands for its month ("Jan 1 2000" -> 2000-01).
        dates = pd.to_datetime(
            values.astype("string").str.strip(), format=time.format, errors="coerce"
        )
        why = f"is not a date in the form {time.format!r}"
        _fail_if(dates.isna(), source, time.column, values, why)
        values = dates.dt.strftime("%Y-%m")
    text = values.astype("string").str.strip()
    # Accept a first-of-month date too ("2021-03-01"): common in exports.
    text = text.str.replace(r"^(\d{4}-\d{2})-01$", r"\1", regex=True)
    bad = ~text.fillna("").str.match(_MONTH)
    _fail_if(bad, source, time.column, values, "is not a month in YYYY-MM form (e.g. 2021-03)")
    year = text.str.slice(0, 4).astype(int)
    _fail_if(
        (year < FIRST_YEAR) | (year > LAST_YEAR),
        source,
        time.column,
        values,
        f"is outside {FIRST_YEAR}-01..{LAST_YEAR}-12",
    )
    return text.astype(str)


def _values(values: pd.Series, source: str, measure: Measure) -> pd.Series:
    col = measure.column
    numbers = pd.to_numeric(values, errors="coerce")
    bad = numbers.isna() | ~np.isfinite(numbers.astype(float))
    _fail_if(bad, source, col, values, "is not a number")
    _check_sign(numbers, values, source, measure)
    _fail_if(numbers.abs() > MAX_VALUE, source, col, values, f"is above {MAX_VALUE:g} in size")
    return numbers.astype(float)


def _check_sign(numbers: pd.Series, values: pd.Series, source: str, measure: Measure) -> None:
    name = f"{measure.name} values"
    if measure.sign == "nonnegative":
        _fail_if(numbers < 0, source, measure.column, values, f"is negative; {name} must be ≥ 0")
    elif measure.sign == "positive":
        _fail_if(
            numbers <= 0, source, measure.column, values, f"is not positive; {name} must be > 0"
        )


def _units(values: pd.Series, source: str, measure: Measure) -> pd.Series:
    col = measure.column
    text = values.astype("string").str.strip()
    blank = text.isna() | (text == "")
    # As floats first: a huge value must be refused, not wrapped to INT64's minimum.
    numbers = pd.to_numeric(text.where(~blank), errors="coerce").astype("Float64")
    bad = ~blank & (numbers.isna() | (numbers % 1 != 0))
    _fail_if(bad, source, col, values, "is not a whole number (leave it blank if unknown)")
    _check_sign(numbers.fillna(0), values, source, measure)
    _fail_if(numbers > MAX_UNITS, source, col, values, f"is above {MAX_UNITS:,}")
    return numbers.astype("Int64")


def _deduplicate(
    frame: pd.DataFrame, source: str, schema: CorpusSchema
) -> tuple[pd.DataFrame, int]:
    dup_key = frame.duplicated(list(KEY), keep=False)
    if not dup_key.any():
        return frame, 0
    exact = frame.duplicated(keep="first")
    remaining = frame[~exact]
    conflict = remaining.duplicated(list(KEY), keep=False)
    if conflict.any():
        rows = remaining[conflict]
        first = rows.iloc[0]
        same = rows[(rows[list(KEY)] == first[list(KEY)]).all(axis=1)]
        lines = ", ".join(str(_row(i)) for i in same.index[:2])
        names = " / ".join(
            str(first[STORE_COLUMNS[slot]]) for slot in SLOTS if schema.slot_level(slot)
        )
        raise IngestError(
            f"{source}, rows {lines}: duplicate {schema.leaf.name}-month "
            f"({names} / {first['month']}) with different values; keep one row per "
            f"{schema.leaf.name} and month."
        )
    return remaining, int(exact.sum())


def _check_names(frame: pd.DataFrame, source: str, schema: CorpusSchema) -> None:
    """Every group of tables gets a distinct, valid SQL name."""
    slots = [STORE_COLUMNS[slot] for slot, _ in schema.group_slots]
    level_names = [name for _, name in schema.group_slots]
    seen: dict[str, tuple[str, ...]] = {}
    groups = frame[slots].drop_duplicates().itertuples(index=False) if slots else [()]
    for values in groups:
        named = {name: str(v) for name, v in zip(level_names, values, strict=True)}
        label = ", ".join(repr(v) for v in reversed(named.values()))
        name = schema.table_name(named, 2000)[:-5]
        if any(not snake(v) for v in named.values()):
            raise IngestError(f"{source}: {label} has no letters or digits to name a table.")
        if len(name) + 5 > MAX_IDENTIFIER:
            raise IngestError(
                f"{source}: table name {name}_YYYY for {label} is longer than "
                f"{MAX_IDENTIFIER} characters; shorten the names."
            )
        other = seen.setdefault(name, tuple(named.values()))
        if other != tuple(named.values()):
            raise IngestError(
                f"{source}: {', '.join(map(repr, reversed(other)))} and {label} map to the "
                f"same table name {name}_YYYY; rename one of them."
            )
