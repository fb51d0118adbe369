"""Read and check an ingest file; every problem names the file, row and column."""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from foretab.errors import IngestError
from foretab.store.naming import table_name

REQUIRED = ("city", "district", "project", "month", "avg_price")
KEY = ("city", "district", "project", "month")
MAX_IDENTIFIER = 63  # PostgreSQL truncates longer identifiers; refuse rather than collide.
_MONTH = r"^\d{4}-(0[1-9]|1[0-2])$"


@dataclass(frozen=True, slots=True)
class CleanCorpus:
    """Validated observations: one row per project-month, typed columns."""

    frame: pd.DataFrame  # city, district, project, month (YYYY-MM), avg_price, units_sold, extras
    extra_columns: tuple[str, ...]
    duplicates_dropped: int


def read_table(path: Path) -> pd.DataFrame:
    """Load a CSV (gzip allowed) or Parquet file as strings-as-read."""
    if not path.exists():
        raise IngestError(f"{path}: no such file.")
    if path.stat().st_size == 0:
        raise IngestError(f"{path}: the file is empty; expected a header row and data rows.")
    with path.open("rb") as handle:
        magic = handle.read(4)
    try:
        if magic == b"PAR1" or path.suffix.lower() in {".parquet", ".pq"}:
            return pd.read_parquet(path)
        is_gzip = magic[:2] == b"\x1f\x8b"
        name = path.name.lower()
        if is_gzip or name.endswith((".csv", ".csv.gz", ".tsv", ".txt")):
            if is_gzip:
                with gzip.open(path, "rb") as probe:
                    if not probe.read(1):
                        raise IngestError(f"{path}: the file is empty after decompression.")
            return pd.read_csv(
                path, dtype=str, keep_default_na=False, compression="gzip" if is_gzip else None
            )
    except IngestError:
        raise
    except (pd.errors.EmptyDataError, ValueError, OSError) as exc:
        raise IngestError(f"{path}: cannot be read as CSV or Parquet ({exc}).") from exc
    raise IngestError(
        f"{path}: unknown format; pass a .csv, .csv.gz or .parquet file in long format "
        "(city, district, project, month, avg_price[, units_sold])."
    )


def clean(raw: pd.DataFrame, source: str) -> CleanCorpus:
    """Check and type the columns; raise ``IngestError`` at the first bad row."""
    if raw.empty:
        raise IngestError(f"{source}: no data rows; expected one row per project-month.")
    raw = raw.rename(columns=lambda c: str(c).strip())
    missing = [c for c in REQUIRED if c not in raw.columns]
    if missing:
        raise IngestError(
            f"{source}: missing column(s) {', '.join(missing)}; the header must include "
            f"{', '.join(REQUIRED)} (units_sold optional)."
        )
    frame = pd.DataFrame(index=raw.index)
    for col in ("city", "district", "project"):
        text = raw[col].astype("string").str.strip()
        bad = text.isna() | (text == "")
        _fail_if(bad, source, col, raw[col], "is empty; every row needs a value")
        frame[col] = text.astype(str)
    frame["month"] = _months(raw["month"], source)
    frame["avg_price"] = _prices(raw["avg_price"], source)
    if "units_sold" in raw.columns:
        frame["units_sold"] = _units(raw["units_sold"], source)
    else:
        frame["units_sold"] = pd.array([pd.NA] * len(raw), dtype="Int64")
    extras = tuple(c for c in raw.columns if c not in (*REQUIRED, "units_sold"))
    for col in extras:
        frame[col] = raw[col].astype("string").fillna("").astype(str)
    frame, dropped = _deduplicate(frame, source)
    _check_names(frame, source)
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


def _months(values: pd.Series, source: str) -> pd.Series:
    if pd.api.types.is_datetime64_any_dtype(values):
        return values.dt.strftime("%Y-%m")
    text = values.astype("string").str.strip()
    # Accept a first-of-month date too ("2021-03-01"): common in exports.
    text = text.str.replace(r"^(\d{4}-\d{2})-01$", r"\1", regex=True)
    bad = ~text.fillna("").str.match(_MONTH)
    _fail_if(bad, source, "month", values, "is not a month in YYYY-MM form (e.g. 2021-03)")
    return text.astype(str)


def _prices(values: pd.Series, source: str) -> pd.Series:
    numbers = pd.to_numeric(values, errors="coerce")
    bad = numbers.isna() | ~np.isfinite(numbers.astype(float))
    _fail_if(bad, source, "avg_price", values, "is not a number")
    _fail_if(numbers < 0, source, "avg_price", values, "is negative; prices must be ≥ 0")
    return numbers.astype(float)


def _units(values: pd.Series, source: str) -> pd.Series:
    text = values.astype("string").str.strip()
    blank = text.isna() | (text == "")
    numbers = pd.to_numeric(text.where(~blank), errors="coerce")
    bad = ~blank & (numbers.isna() | (numbers % 1 != 0))
    _fail_if(bad, source, "units_sold", values, "is not a whole number (leave it blank if unknown)")
    _fail_if(numbers < 0, source, "units_sold", values, "is negative")
    return numbers.astype("Int64")


def _deduplicate(frame: pd.DataFrame, source: str) -> tuple[pd.DataFrame, int]:
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
        raise IngestError(
            f"{source}, rows {lines}: duplicate project-month "
            f"({first['city']} / {first['district']} / {first['project']} / {first['month']}) "
            "with different values; keep one row per project and month."
        )
    return remaining, int(exact.sum())


def _check_names(frame: pd.DataFrame, source: str) -> None:
    seen: dict[str, tuple[str, str]] = {}
    for city, district in frame[["city", "district"]].drop_duplicates().itertuples(index=False):
        name = table_name(district, city, 2000)[:-5]
        if not name.removeprefix("project_price_table_").strip("_"):
            raise IngestError(
                f"{source}: district {district!r} of {city!r} has no letters or digits to name a table."
            )
        if len(name) + 5 > MAX_IDENTIFIER:
            raise IngestError(
                f"{source}: table name {name}_YYYY for {district!r}, {city!r} is longer than "
                f"{MAX_IDENTIFIER} characters; shorten the district or city name."
            )
        other = seen.setdefault(name, (city, district))
        if other != (city, district):
            raise IngestError(
                f"{source}: {other[1]!r}, {other[0]!r} and {district!r}, {city!r} map to the "
                f"same table name {name}_YYYY; rename one of them."
            )
