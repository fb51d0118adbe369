"""Ingest never destroys what is not a store, and swaps a store in as one unit (DuckDB).

Kill tests run a real ingest in a child process that SIGKILLs itself at a chosen step;
the store must then be the old one or the new one, never a mix, and the next ingest must
leave no leftovers.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from foretab.core.months import Month
from foretab.errors import StoreError
from foretab.store import open_future, open_history
from foretab.store.ingest import ingest_frame

SRC = str(Path(__file__).resolve().parents[2] / "src")


def frame() -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "city": "Nanjing",
                "district": "Jiangning District",
                "project": "Greenland Lixiang City",
                "month": f"{year}-{m:02d}",
                "avg_price": 20_000.0 + year + m,
                "units_sold": m,
            }
            for year in (2020, 2021, 2022)
            for m in range(1, 13)
        ]
    )


def _digest(path: Path) -> str:
    if path.is_dir():
        return "dir:" + ",".join(sorted(p.name for p in path.iterdir()))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_text_file_and_unrelated_folder_are_left_alone(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    folder = tmp_path / "notes.txt.artifacts"
    folder.mkdir()
    (folder / "keep.me").write_text("precious")
    before = {p: _digest(p) for p in (notes, folder, folder / "keep.me")}
    with pytest.raises(StoreError, match="changed nothing"):
        ingest_frame(frame(), str(notes), Month(2021, 6))
    assert {p: _digest(p) for p in before} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "notes.txt.artifacts"]


def test_unrelated_duckdb_file_is_left_alone(tmp_path: Path) -> None:
    db = tmp_path / "other.duckdb"
    with duckdb.connect(str(db)) as conn:
        conn.execute("CREATE TABLE mine AS SELECT 42 AS answer")
    before = _digest(db)
    with pytest.raises(StoreError, match="changed nothing"):
        ingest_frame(frame(), str(db), Month(2021, 6))
    assert _digest(db) == before


def test_foreign_symlink_and_device_are_left_alone(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("x")
    link = tmp_path / "corpus.duckdb"
    link.symlink_to(elsewhere)
    with pytest.raises(StoreError, match="changed nothing"):
        ingest_frame(frame(), str(link), Month(2021, 6))
    assert os.readlink(link) == str(elsewhere) and elsewhere.read_text() == "x"
    with pytest.raises(StoreError, match="changed nothing"):
        ingest_frame(frame(), "/dev/null", Month(2021, 6))
    assert Path("/dev/null").is_char_device()


def test_occupied_future_path_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "corpus.future.duckdb").write_text("not a store")
    with pytest.raises(StoreError, match="changed nothing"):
        ingest_frame(frame(), str(tmp_path / "corpus.duckdb"), Month(2021, 6))
    assert not (tmp_path / "corpus.duckdb").exists()


def _layout_is_clean(folder: Path) -> None:
    assert sorted(p.name for p in folder.iterdir()) == [
        ".corpus.duckdb.store",
        "corpus.artifacts",
        "corpus.duckdb",
        "corpus.future.duckdb",
    ]
    generations = sorted(p.name for p in (folder / ".corpus.duckdb.store").iterdir())
    assert len(generations) == 2 and "current" in generations


def test_reingest_replaces_the_store_and_leaves_one_generation(tmp_path: Path) -> None:
    db = str(tmp_path / "corpus.duckdb")
    ingest_frame(frame(), db, Month(2021, 6))
    ingest_frame(frame(), db, Month(2021, 12))
    _layout_is_clean(tmp_path)
    with open_history(db) as store:
        assert store.reference_month == Month(2021, 12)


def test_store_of_the_older_plain_layout_is_upgraded(tmp_path: Path) -> None:
    from foretab.store.layout import split
    from foretab.store.validate import clean
    from foretab.store.writers import write_duckdb

    history, future = split(clean(frame().astype(str), "x"), Month(2021, 6))
    meta = {"reference_month": "2021-06"}
    write_duckdb(str(tmp_path / "corpus.duckdb"), history, meta, lambda _: None)
    assert future is not None
    write_duckdb(str(tmp_path / "corpus.future.duckdb"), future, meta, lambda _: None)
    (tmp_path / "corpus.artifacts").mkdir()
    ingest_frame(frame(), str(tmp_path / "corpus.duckdb"), Month(2021, 12))
    _layout_is_clean(tmp_path)
    assert (tmp_path / "corpus.duckdb").is_symlink()


_KILLER = """
import os, signal, sys
import pandas as pd
sys.path.insert(0, {tests!r})
from test_store_swap import frame
from foretab.core.months import Month
from foretab.store import ingest

point = sys.argv[2]
count = [0]

def kill_at(name, fn):
    def wrapper(*args, **kwargs):
        if point == f"{{name}}{{count[0]}}":
            os.kill(os.getpid(), signal.SIGKILL)
        count[0] += 1
        return fn(*args, **kwargs)
    return wrapper

os.replace = kill_at("fs", os.replace)
os.symlink = kill_at("fs", os.symlink)
real_write = ingest.write_duckdb

def write_then_die(*args, **kwargs):
    real_write(*args, **kwargs)
    if point == "build":
        os.kill(os.getpid(), signal.SIGKILL)

ingest.write_duckdb = write_then_die
ingest.ingest_frame(frame(), sys.argv[1], Month(2021, 12))
"""

# "build": after the first new file was written; fsN: before the N-th rename or link.
FAST_POINTS = ["build", "fs2"]
ALL_POINTS = ["build", *(f"fs{n}" for n in range(9))]


def _kill_during_ingest(tmp_path: Path, point: str) -> None:
    base = tmp_path / "base"
    base.mkdir()
    ingest_frame(frame(), str(base / "corpus.duckdb"), Month(2021, 6))
    work = tmp_path / "work"
    shutil.copytree(base, work, symlinks=True)
    db = str(work / "corpus.duckdb")
    code = _KILLER.format(tests=str(Path(__file__).parent))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code, db, point], env=env, check=False)
    assert done.returncode in (-9, 0), done
    with open_history(db) as history, open_future(db) as future:
        # The old store or the new one, never a mix.
        assert history.reference_month in (Month(2021, 6), Month(2021, 12))
        assert history.meta["generation"] == future.meta["generation"]
        assert history.meta["reference_month"] == future.meta["reference_month"]
    ingest_frame(frame(), db, Month(2021, 12))
    _layout_is_clean(work)


@pytest.mark.parametrize("point", FAST_POINTS)
def test_kill_during_ingest_leaves_old_or_new(tmp_path: Path, point: str) -> None:
    _kill_during_ingest(tmp_path, point)


@pytest.mark.slow
@pytest.mark.parametrize("point", ALL_POINTS)
def test_kill_at_every_step_leaves_old_or_new(tmp_path: Path, point: str) -> None:
    _kill_during_ingest(tmp_path, point)


def test_store_files_are_owner_only(tmp_path: Path) -> None:
    db = tmp_path / "corpus.duckdb"
    ingest_frame(frame(), str(db), Month(2021, 6))
    for path in (db, tmp_path / "corpus.future.duckdb"):
        assert path.resolve().stat().st_mode & 0o777 == 0o600, path
    assert (tmp_path / "corpus.artifacts").resolve().stat().st_mode & 0o777 == 0o700
    assert (tmp_path / ".corpus.duckdb.store").stat().st_mode & 0o077 == 0
    assert db.resolve().parent.stat().st_mode & 0o777 == 0o700
