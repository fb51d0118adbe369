"""Ingest on both backends: the layout docs/design.md §1 describes, and bad input changes nothing."""

from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd
import psycopg
import pytest

from foretab.core.months import Month
from foretab.errors import IngestError
from foretab.store import open_future, open_history
from foretab.store.ingest import ingest_frame, ingest_path

GOOD_ROWS = [
    ("Nanjing", "Jiangning District", "Poly Central Park", "2020-11", 21000.5, 10, "保利中央公园"),
    ("Nanjing", "Jiangning District", "Poly Central Park", "2020-12", 21100.0, 12, "保利中央公园"),
    ("Nanjing", "Jiangning District", "Poly Central Park", "2021-01", 21300.0, 8, "保利中央公园"),
    (
        "Nanjing",
        "Jiangning District",
        "Greenland Lixiang City",
        "2020-12",
        18000.0,
        5,
        "绿地理想城",
    ),
    (
        "Nanjing",
        "Jiangning District",
        "Greenland Lixiang City",
        "2021-02",
        18200.0,
        "",
        "绿地理想城",
    ),
    ("Shenzhen", "Bao'an District", "Vanke Future Light", "2020-12", 65000.0, 3, "万科未来之光"),
    ("Shenzhen", "Bao'an District", "Vanke Future Light", "2021-03", 66000.0, 4, "万科未来之光"),
]
HEADER = "city,district,project,month,avg_price,units_sold,project_zh"


def write_csv(path: Path, rows: list[tuple[object, ...]], header: str = HEADER) -> Path:
    lines = [header] + [",".join(f'"{v}"' if "," in str(v) else str(v) for v in r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(params=["duckdb", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "duckdb":
        return str(tmp_path / "store" / "corpus.duckdb")
    server = request.getfixturevalue("pg_server")
    return server.url(server.fresh_dbname("ingest"))


def snapshot(db: str) -> tuple[object, ...]:
    """Everything observable about a store: catalog, projects, every row of both sides."""
    parts: list[object] = []
    for opener in (open_history, open_future):
        try:
            with opener(db) as store:
                parts += [
                    store.reference_month,
                    tuple(store.catalog()),
                    tuple(store.entities()),
                    tuple(map(tuple, store.panel().itertuples(index=False))),
                ]
        except Exception as exc:  # a missing side is part of the state
            parts.append(type(exc).__name__)
    return tuple(parts)


def test_layout_with_reference_month(db: str, tmp_path: Path) -> None:
    path = write_csv(tmp_path / "in.csv", GOOD_ROWS)
    summary = ingest_path(path, db, Month(2020, 12))
    assert (summary.history_tables, summary.future_tables) == (2, 2)
    assert (summary.history_rows, summary.future_rows) == (4, 3)
    with open_history(db) as history:
        assert history.reference_month == Month(2020, 12)
        names = [e.table_name for e in history.catalog()]
        assert names == [
            "project_price_table_jiangning_district_nanjing_2020",
            "project_price_table_baoan_district_shenzhen_2020",
        ]
        captions = {e.caption for e in history.catalog()}
        assert "Project Price Table for Bao'an District, Shenzhen, 2020" in captions
        assert history.panel()["month"].max() == "2020-12"
        poly = next(p for p in history.entities() if p.name == "Poly Central Park")
        assert poly.aliases == ("保利中央公园",) and poly.n_months == 2
    with open_future(db) as future:
        assert future.panel()["month"].min() == "2021-01"
        assert {e.year for e in future.catalog()} == {2021}


def test_the_default_reference_is_the_last_month(tmp_path: Path) -> None:
    db = str(tmp_path / "all.duckdb")
    summary = ingest_path(write_csv(tmp_path / "in.csv", GOOD_ROWS), db)
    assert summary.future_tables == 0 and summary.history_rows == len(GOOD_ROWS)
    assert summary.reference_month == max(Month.parse(r[3]) for r in GOOD_ROWS)
    assert not Path(tmp_path / "all.future.duckdb").exists()
    with open_history(db) as store:
        assert store.reference_month == summary.reference_month


def test_table_columns_and_types_duckdb(tmp_path: Path) -> None:
    import duckdb

    db = tmp_path / "c.duckdb"
    ingest_path(write_csv(tmp_path / "in.csv", GOOD_ROWS), str(db), Month(2021, 3))
    conn = duckdb.connect(str(db), read_only=True)
    cols = conn.execute(
        "SELECT column_name, data_type FROM information_schema.columns "
        "WHERE table_name = 'project_price_table_jiangning_district_nanjing_2021' ORDER BY ordinal_position"
    ).fetchall()
    assert cols == [
        ("project_name", "VARCHAR"),
        ("month", "DATE"),
        ("price", "DOUBLE"),
        ("units_sold", "INTEGER"),
        ("project_zh", "VARCHAR"),
    ]
    blank_units = conn.execute(
        "SELECT units_sold FROM project_price_table_jiangning_district_nanjing_2021 "
        "WHERE project_name = 'Greenland Lixiang City'"
    ).fetchall()
    assert blank_units == [(None,)]
    conn.close()


def test_parquet_and_gzip_inputs(tmp_path: Path) -> None:
    frame = pd.DataFrame(GOOD_ROWS, columns=HEADER.split(","))
    frame["units_sold"] = pd.to_numeric(frame["units_sold"]).astype("Int64")
    frame.to_parquet(tmp_path / "in.parquet")
    csv = write_csv(tmp_path / "in.csv", GOOD_ROWS)
    with gzip.open(tmp_path / "in.csv.gz", "wb") as handle:
        handle.write(csv.read_bytes())
    a = ingest_path(tmp_path / "in.parquet", str(tmp_path / "a.duckdb"), Month(2020, 12))
    b = ingest_path(tmp_path / "in.csv.gz", str(tmp_path / "b.duckdb"), Month(2020, 12))
    assert (a.history_rows, a.future_rows) == (b.history_rows, b.future_rows) == (4, 3)
    assert snapshot(str(tmp_path / "a.duckdb")) == snapshot(str(tmp_path / "b.duckdb"))


def test_reingest_replaces(db: str, tmp_path: Path) -> None:
    ingest_path(write_csv(tmp_path / "a.csv", GOOD_ROWS), db, Month(2020, 12))
    ingest_path(write_csv(tmp_path / "b.csv", GOOD_ROWS[:3]), db)
    with open_history(db) as store:
        assert store.reference_month == Month(2021, 1)  # the last month of the new data
        assert {p.name for p in store.entities()} == {"Poly Central Park"}
    with pytest.raises(Exception, match=r"future"):
        open_future(db)


def test_identical_duplicates_are_dropped(tmp_path: Path) -> None:
    rows = [*GOOD_ROWS, GOOD_ROWS[0]]
    summary = ingest_path(write_csv(tmp_path / "in.csv", rows), str(tmp_path / "d.duckdb"))
    assert summary.duplicates_dropped == 1 and summary.history_rows == len(GOOD_ROWS)


def test_ingest_frame(tmp_path: Path) -> None:
    frame = pd.DataFrame(GOOD_ROWS, columns=HEADER.split(","))
    summary = ingest_frame(frame, str(tmp_path / "f.duckdb"), Month(2020, 12))
    assert summary.history_rows == 4


BAD_CASES = [
    # (description, header, rows, expected message pattern)
    (
        "missing column",
        "city,district,project,month",
        [("A", "B", "C", "2020-01")],
        r"missing column\(s\) avg_price",
    ),
    (
        "bad month",
        HEADER,
        [GOOD_ROWS[0], ("Nanjing", "X District", "P", "2020-13", 1.0, 1, "")],
        r"row 3, column 'month'.*'2020-13'.*YYYY-MM",
    ),
    (
        "month as text",
        HEADER,
        [("Nanjing", "X District", "P", "March 2020", 1.0, 1, "")],
        r"row 2, column 'month'",
    ),
    (
        "non-numeric price",
        HEADER,
        [GOOD_ROWS[0], GOOD_ROWS[1], ("Nanjing", "X District", "P", "2020-01", "abc", 1, "")],
        r"row 4, column 'avg_price'.*'abc'.*not a number",
    ),
    (
        "blank price",
        HEADER,
        [("Nanjing", "X District", "P", "2020-01", "", 1, "")],
        r"row 2, column 'avg_price'.*not a number",
    ),
    (
        "negative price",
        HEADER,
        [("Nanjing", "X District", "P", "2020-01", -5, 1, "")],
        r"row 2, column 'avg_price'.*negative",
    ),
    (
        "non-integer units",
        HEADER,
        [("Nanjing", "X District", "P", "2020-01", 5, 1.5, "")],
        r"row 2, column 'units_sold'",
    ),
    (
        "empty project",
        HEADER,
        [("Nanjing", "X District", "", "2020-01", 5, 1, "")],
        r"row 2, column 'project'.*empty",
    ),
    (
        "conflicting duplicate",
        HEADER,
        [GOOD_ROWS[0], (*GOOD_ROWS[0][:4], 99999.0, *GOOD_ROWS[0][5:])],
        r"rows 2, 3: duplicate project-month.*Poly Central Park.*2020-11",
    ),
    ("header only", HEADER, [], r"no data rows"),
]


@pytest.fixture(scope="module", params=["duckdb", "postgresql"])
def good_store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path]:
    """One store ingested from ``GOOD_ROWS`` per backend, shared by the bad-input cases, and
    the folder of its good CSV (and of the DuckDB store's files).

    Sharing it is the stronger check (every refused ingest must leave the store exactly as
    it was for the next bad input too) and saves a good ingest per case (~0.2 s, 20 cases).
    """
    folder = tmp_path_factory.mktemp(f"good-{request.param}")
    if request.param == "duckdb":
        db = str(folder / "store" / "corpus.duckdb")
    else:
        server = request.getfixturevalue("pg_server")
        db = server.url(server.fresh_dbname("ingest"))
    ingest_path(write_csv(folder / "good.csv", GOOD_ROWS), db, Month(2020, 12))
    return db, folder


def _files(*folders: Path) -> list[str]:
    return sorted(str(p.relative_to(f)) for f in folders for p in f.rglob("*"))


@pytest.mark.parametrize(
    ("case", "header", "rows", "pattern"), BAD_CASES, ids=[c[0] for c in BAD_CASES]
)
def test_bad_input_names_the_problem_and_changes_nothing(
    good_store: tuple[str, Path],
    tmp_path: Path,
    case: str,
    header: str,
    rows: list[tuple[object, ...]],
    pattern: str,
) -> None:
    db, store_folder = good_store
    before = snapshot(db)
    bad = write_csv(tmp_path / "bad.csv", rows, header)
    files_before = _files(tmp_path, store_folder)
    with pytest.raises(IngestError, match=pattern) as info:
        ingest_path(bad, db, Month(2020, 12))
    assert "bad.csv" in str(info.value)
    assert snapshot(db) == before
    assert _files(tmp_path, store_folder) == files_before


@pytest.mark.parametrize(
    ("name", "content", "pattern"),
    [
        ("empty.csv", b"", r"empty"),
        ("data.xlsx", b"PK\x03\x04 not a table", r"unknown format"),
        (
            "empty.csv.gz",
            gzip.compress(b"", mtime=0),
            r"empty",
        ),  # fixed bytes: same test id everywhere
    ],
)
def test_unreadable_files(tmp_path: Path, name: str, content: bytes, pattern: str) -> None:
    db = str(tmp_path / "s.duckdb")
    ingest_path(write_csv(tmp_path / "good.csv", GOOD_ROWS), db)
    before = snapshot(db)
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(IngestError, match=pattern) as info:
        ingest_path(path, db)
    assert name in str(info.value)
    assert snapshot(db) == before


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="no such file"):
        ingest_path(tmp_path / "nope.csv", str(tmp_path / "x.duckdb"))
    assert not (tmp_path / "x.duckdb").exists()


@pytest.mark.parametrize("reference", [Month(2010, 1), Month(2030, 1)])
def test_a_reference_outside_the_data_is_refused(tmp_path: Path, reference: Month) -> None:
    first = min(r[3] for r in GOOD_ROWS)
    last = max(r[3] for r in GOOD_ROWS)
    with pytest.raises(IngestError, match=f"outside the data's range {first}..{last}"):
        ingest_path(
            write_csv(tmp_path / "in.csv", GOOD_ROWS), str(tmp_path / "x.duckdb"), reference
        )
    assert not (tmp_path / "x.duckdb").exists()


def test_postgres_sides_are_separate_databases(pg_server: object, tmp_path: Path) -> None:
    url = pg_server.url(pg_server.fresh_dbname("sides"))  # type: ignore[attr-defined]
    ingest_path(write_csv(tmp_path / "in.csv", GOOD_ROWS), url, Month(2020, 12))
    with psycopg.connect(url) as conn:
        tables = {
            r[0]
            for r in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname NOT IN "
                "('pg_catalog', 'information_schema')"
            )
        }
    assert any(t.endswith("_2020") for t in tables)  # history's tables are there
    assert not any(t.endswith("_2021") for t in tables)  # 2021 is the future: other database
