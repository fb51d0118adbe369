"""Bad input is refused early with a clear message (docs/safety.md, input limits)."""

from __future__ import annotations

import gzip
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from foretab.errors import IngestError
from foretab.store import validate
from foretab.store.ingest import ingest_path

HEADER = "city,district,project,month,avg_price,units_sold"
ROW = "Nanjing,Jiangning District,Poly Central Park,2021-01,30000,5"


def _csv(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "in.csv"
    path.write_text("\n".join([HEADER, *lines]) + "\n")
    return path


@pytest.mark.parametrize(
    ("line", "match"),
    [
        ("Nanjing,Jiangning District,P,2021-01,30000,1e20", "units_sold"),
        ("Nanjing,Jiangning District,P,2021-01,30000,99999999999", "units_sold"),
        ("Nanjing,Jiangning District,P,0000-01,30000,5", "outside 1900-01"),
        ("Nanjing,Jiangning District,P,2021-01,1e300,5", "avg_price"),
        ("Nanjing,Jiangning District," + "P" * 10_000 + ",2021-01,30000,5", "longer than 200"),
        ("Nanjing,Jiangning District,P,2021-01", "row 3: 4 fields where the header has 6"),
        ("Nanjing,Jiangning District,P,2021-01,30000,5,extra,fields", "row 3: 8 fields"),
        ("Nanjing,Jiangning District,P,2021-01,30000", "row 3: 5 fields where the header has 6"),
        ("Nanjing,Jiangning District,P\x00Q,2021-01,30000,5", "row 3, column 'project': .* NUL"),
    ],
    ids=[
        "units-1e20",
        "units-int32",
        "month-0000",
        "price-huge",
        "long-name",
        "short",
        "long",
        "one-field-short",
        "nul-in-name",
    ],
)
def test_bad_rows_are_refused(tmp_path: Path, line: str, match: str) -> None:
    path = _csv(tmp_path, ROW, line)
    with pytest.raises(IngestError, match=match):
        ingest_path(path, str(tmp_path / "c.duckdb"))
    assert not (tmp_path / "c.duckdb").exists()


def test_a_huge_header_is_refused_quickly(tmp_path: Path) -> None:
    path = tmp_path / "wide.csv"
    path.write_text(HEADER + "," + ",".join(f"c{i}" for i in range(1_000_000)) + "\n" + ROW + "\n")
    started = time.perf_counter()
    with pytest.raises(IngestError, match="header row is longer"):
        ingest_path(path, str(tmp_path / "c.duckdb"))
    assert time.perf_counter() - started < 3.0


def test_too_many_columns_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "cols.csv"
    path.write_text(HEADER + "," + ",".join(f"c{i}" for i in range(100)) + "\n")
    with pytest.raises(IngestError, match="at most 64"):
        ingest_path(path, str(tmp_path / "c.duckdb"))


def test_a_gzip_bomb_is_refused_before_it_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(validate, "MAX_INPUT_BYTES", 2**20)
    path = tmp_path / "bomb.csv.gz"
    with gzip.open(path, "wb", compresslevel=1) as handle:
        handle.write((HEADER + "\n").encode())
        for _ in range(8):
            handle.write((ROW + "\n").encode() * 30_000)  # ~8 x 1.4 MB
    assert path.stat().st_size < 200_000
    with pytest.raises(IngestError, match="MiB of data"):
        ingest_path(path, str(tmp_path / "c.duckdb"))


def test_a_long_question_is_refused_quickly(tmp_path: Path) -> None:
    from foretab.cli.main import app, register_commands

    register_commands()
    started = time.perf_counter()
    result = CliRunner().invoke(app, ["ask", "price? " * 3_000, "--db", str(tmp_path / "x")])
    assert result.exit_code == 2
    assert "at most 500" in result.output
    assert time.perf_counter() - started < 3.0
