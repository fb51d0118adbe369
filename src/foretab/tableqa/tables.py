"""Where the table comes from: a CSV/Parquet file, or a history table read through the guard."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from foretab.errors import ForetabError

if TYPE_CHECKING:
    import pandas as pd

# A history table is one district-year; anything near this is not what a user meant.
STORE_TABLE_MAX_ROWS = 500_000


class TableSourceError(ForetabError):
    """The table to question cannot be read."""


def load_table(path: str | Path) -> pd.DataFrame:
    """A ``.csv`` (optionally ``.gz``) or ``.parquet`` file as a DataFrame."""
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise TableSourceError(
            f"table file {str(path)!r} does not exist; pass --table PATH.csv|.parquet"
        )
    suffixes = [s.lower() for s in path.suffixes]
    try:
        if suffixes[-1:] == [".parquet"] or suffixes[-1:] == [".pq"]:
            from foretab.store.validate import read_parquet_limited

            # Decoded size checked before and while reading (a small file can be gigabytes).
            return read_parquet_limited(path, max_columns=None)
        if ".csv" in suffixes or ".tsv" in suffixes:
            return pd.read_csv(path, sep="\t" if ".tsv" in suffixes else ",")
    except (OSError, ValueError) as error:
        raise TableSourceError(f"cannot read {str(path)!r}: {error}") from None
    raise TableSourceError(
        f"{str(path)!r} is neither CSV nor Parquet; pass a .csv, .csv.gz or .parquet file"
    )


def load_store_table(db: str, table_name: str) -> pd.DataFrame:
    """Every row of one catalog table of a store's history, read through the SQL guard."""
    import pandas as pd
    from sqlglot import exp

    from foretab.sql.guard import GuardedExecutor

    query = exp.select("*").from_(exp.Table(this=exp.to_identifier(table_name, quoted=True)))
    with GuardedExecutor(db, max_rows=STORE_TABLE_MAX_ROWS, timeout_s=30.0) as guard:
        if table_name.lower() not in guard.allowed_tables:
            raise TableSourceError(
                f"{table_name!r} is not a table of this store's history; list them with "
                f"`foretab tables --db {db}`"
            )
        result = guard.execute(query)
    if result.truncated:
        raise TableSourceError(
            f"{table_name!r} has more than {STORE_TABLE_MAX_ROWS:,} rows; question a smaller table"
        )
    return pd.DataFrame(list(result.rows), columns=list(result.columns))
