"""Parquet bombs (issue 28, item 6): small files that decode to gigabytes are refused from
the footer's counts or while reading in batches, in bounded memory, with an IngestError
(never an uncaught ArrowMemoryError). Before, a 70 KB file took 1.39 GB of RSS."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from foretab.errors import IngestError
from foretab.store.ingest import ingest_path
from foretab.store.validate import read_parquet_limited

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _repeated(value: object, n: int) -> pa.Array:
    # One value n times without n Python objects (the test's own memory stays small).
    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)), pa.array([value]))


def _rows(n: int, name: str = "Poly Central Park") -> pa.Table:
    return pa.table(
        {
            "city": _repeated("Nanjing", n),
            "district": _repeated("Jiangning District", n),
            "project": _repeated(name, n),
            "month": _repeated("2021-01", n),
            "avg_price": pa.array(np.full(n, 30000.0)),
            "units_sold": pa.array(np.full(n, 5, dtype=np.int64)),
        }
    )


def many_rows(path: Path) -> Path:
    """50 M rows of one repeated row: ~1 MB on disk, gigabytes once decoded."""
    chunk = _rows(1_000_000)
    with pq.ParquetWriter(path, chunk.schema, compression="zstd") as writer:
        for _ in range(50):
            writer.write_table(chunk, row_group_size=1_000_000)
    return path


def long_strings(path: Path) -> Path:
    """200,000 rows naming one 5,000-character project: dictionary-encoded, ~1 GB decoded."""
    pq.write_table(_rows(200_000, "P" * 5_000), path, compression="zstd", row_group_size=200_000)
    return path


_MEASURE = """
import json, sys
from pathlib import Path
from foretab.errors import IngestError
from foretab.store.ingest import ingest_path
try:
    ingest_path(Path(sys.argv[1]), sys.argv[2])
    outcome = "ingested"
except IngestError as error:
    outcome = "refused: " + error.message
# VmHWM: this process's peak RSS (ru_maxrss would carry the parent's over exec).
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
print(json.dumps({"outcome": outcome, "rss_mb": int(status["VmHWM"].split()[0]) / 1024}))
"""


# Writing the 50 M-row file takes several seconds: that case runs with the slow tests.
@pytest.mark.parametrize(
    "make",
    [pytest.param(many_rows, marks=pytest.mark.slow), long_strings],
    ids=["50M-rows", "long-strings"],
)
def test_bomb_is_refused_in_bounded_memory(tmp_path: Path, make) -> None:
    path = make(tmp_path / "bomb.parquet")
    assert path.stat().st_size < 2_000_000
    env = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(path), str(tmp_path / "c.duckdb")],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["outcome"].startswith("refused: "), report
    assert "decoded" in report["outcome"]
    assert report["rss_mb"] < 600, report  # the interpreter, pandas and pyarrow: ~180 MB
    assert not (tmp_path / "c.duckdb").exists()


def test_a_lying_footer_is_caught_while_reading(tmp_path: Path, monkeypatch) -> None:
    # The footer's counts pass (checks off); the batches' decoded size still stops it.
    path = long_strings(tmp_path / "bomb.parquet")
    from foretab.store import validate

    monkeypatch.setattr(validate, "_check_parquet", lambda *_args: None)
    with pytest.raises(IngestError, match="once decoded"):
        read_parquet_limited(path)


def test_an_ordinary_parquet_file_still_ingests(tmp_path: Path) -> None:
    path = tmp_path / "ok.parquet"
    pq.write_table(_rows(3), path)
    frame = read_parquet_limited(path)
    assert list(frame.columns)[:3] == ["city", "district", "project"] and len(frame) == 3
    ingest_path(path, str(tmp_path / "c.duckdb"))


@pytest.mark.slow  # the 50 M-row file again
def test_tableqa_tables_are_read_with_the_same_check(tmp_path: Path) -> None:
    from foretab.tableqa.tables import load_table

    with pytest.raises(IngestError, match="once decoded"):
        load_table(many_rows(tmp_path / "bomb.parquet"))
    wide = tmp_path / "wide.parquet"
    pq.write_table(pa.table({f"c{i}": [i] for i in range(100)}), wide)
    assert load_table(wide).shape == (1, 100)  # a wide table is fine for table QA
