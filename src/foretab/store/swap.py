"""DuckDB stores on disk: generations behind one pointer, swapped by one rename.

``--db corpus.duckdb`` is laid out as::

    corpus.duckdb         -> .corpus.duckdb.store/current/history.duckdb
    corpus.future.duckdb  -> .corpus.duckdb.store/current/future.duckdb
    corpus.artifacts      -> .corpus.duckdb.store/current/artifacts
    .corpus.duckdb.store/current -> g-<id>     (the pointer)
    .corpus.duckdb.store/g-<id>/               (one complete generation)

An ingest builds a whole new generation beside the old one and then replaces the pointer
with one ``rename``: a reader resolves either the old generation or the new one, never
a mix, and a kill at any moment leaves one of them current. Leftovers (unfinished
generations, temporary pointers, old generations) are removed by the next ingest.

Ingest writes only where nothing exists or a foretab store does (``check_target``): a
text file, an unrelated DuckDB file, a device or a foreign symlink is left untouched.

One ingest per store at a time: ``swap_in`` holds an exclusive ``flock`` on the store
folder from the check to the cleanup, so no ingest removes another's generation in
progress (the leftover sweep did); another ingest is refused at once. Readers take no
lock: one that resolved a generation just removed resolves the path again.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import stat
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from foretab.errors import StoreError
from foretab.store.location import StoreLocation

CURRENT = "current"
HISTORY_FILE = "history.duckdb"
FUTURE_FILE = "future.duckdb"
ARTIFACTS_DIR = "artifacts"
_DUCKDB_MAGIC = b"DUCK"

Builder = Callable[[Path, Path], None]  # (history file, future file) of a new generation


def store_dir(location: StoreLocation) -> Path:
    """The folder holding the generations: ``.corpus.duckdb.store`` beside the store."""
    history = Path(location.history)
    return history.with_name(f".{history.name}.store")


def _links(location: StoreLocation) -> dict[Path, str]:
    """The three fixed paths and where each points (relative, through the pointer)."""
    folder = store_dir(location).name
    return {
        Path(location.future): f"{folder}/{CURRENT}/{FUTURE_FILE}",
        location.artifacts_dir: f"{folder}/{CURRENT}/{ARTIFACTS_DIR}",
        Path(location.history): f"{folder}/{CURRENT}/{HISTORY_FILE}",
    }


def check_target(location: StoreLocation) -> None:
    """Refuse (changing nothing) unless every path ingest would touch is free or ours."""
    history = Path(location.history)
    legacy_history = _is_legacy_store(history, "history")
    for path, target in _links(location).items():
        try:
            info = path.lstat()
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(info.st_mode) and os.readlink(path) == target:
            continue  # a link of this layout
        if path == history and legacy_history:
            continue
        if path == Path(location.future) and legacy_history and _is_legacy_store(path, "future"):
            continue
        if path == location.artifacts_dir and legacy_history and stat.S_ISDIR(info.st_mode):
            continue
        raise StoreError(
            f"--db {history}: {path} exists and is not part of a foretab store, so ingest "
            "changed nothing. Choose another --db path, or move that file away first."
        )
    folder = store_dir(location)
    if folder.exists() and (folder.is_symlink() or not folder.is_dir()):
        raise StoreError(
            f"--db {history}: {folder} exists and is not a foretab store folder; "
            "ingest changed nothing. Move it away or choose another --db path."
        )


def _is_legacy_store(path: Path, side: str) -> bool:
    """A plain DuckDB file written by an older foretab (its metadata says so)."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(info.st_mode):
        return False
    with path.open("rb") as handle:
        if handle.read(12)[8:12] != _DUCKDB_MAGIC:
            return False
    from foretab.store.stores import read_meta

    meta = read_meta(str(path))
    return meta is not None and meta.get("side", side) == side


@contextlib.contextmanager
def ingest_lock(location: StoreLocation) -> Iterator[None]:
    """Hold the store's ingest lock (a ``flock`` on its folder), or refuse at once."""
    folder = store_dir(location)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NOFOLLOW)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreError(
                f"--db {location.history}: another ingest into this store is running; this "
                "one changed nothing, and the store stays readable. Wait for that ingest to "
                "finish, then run this one again."
            ) from None
        yield
    finally:
        os.close(fd)  # releases the lock


def swap_in(location: StoreLocation, build: Builder) -> None:
    """Build a new generation with ``build`` and make it current in one rename."""
    check_target(location)  # before the lock creates the store folder
    with ingest_lock(location):
        _swap_in(location, build)


def _swap_in(location: StoreLocation, build: Builder) -> None:
    check_target(location)
    folder = store_dir(location)
    generation = f"g-{uuid.uuid4().hex[:12]}"
    pending = folder / f"{generation}.tmp"
    # Owner only, like the model files: the future store is the evaluation's answers.
    pending.mkdir(mode=0o700)
    try:
        build(pending / HISTORY_FILE, pending / FUTURE_FILE)
        (pending / ARTIFACTS_DIR).mkdir(mode=0o700)
        _drop_wal(pending)
        for path in (pending, *pending.iterdir()):
            path.chmod(0o700 if path.is_dir() else 0o600)
    except BaseException:
        shutil.rmtree(pending, ignore_errors=True)
        raise
    os.replace(pending, folder / generation)  # complete generations have no .tmp suffix
    pointer = folder / f"{CURRENT}.{generation}.tmp"
    os.symlink(generation, pointer)
    os.replace(pointer, folder / CURRENT)  # the switch
    for path, target in _links(location).items():
        _place_link(path, target)
    clean_leftovers(location)


def _place_link(path: Path, target: str) -> None:
    if path.is_symlink() and os.readlink(path) == target:
        return
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.link.tmp")
    os.symlink(target, temporary)
    if path.is_dir() and not path.is_symlink():
        # An older foretab's artifacts folder: its models belong to the old data.
        stale = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.old")
        os.replace(path, stale)
        shutil.rmtree(stale, ignore_errors=True)
    os.replace(temporary, path)


def clean_leftovers(location: StoreLocation) -> None:
    """Remove everything but the current generation: killed ingests, old generations."""
    folder = store_dir(location)
    current = os.readlink(folder / CURRENT) if (folder / CURRENT).is_symlink() else None
    for entry in folder.iterdir() if folder.is_dir() else ():
        if entry.name in (CURRENT, current):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
    parent = Path(location.history).parent
    names = {p.name for p in _links(location)}
    for entry in parent.iterdir():
        # Temporary links and files of killed ingests (this layout's and older ones').
        ours = any(entry.name.startswith(f".{n}.") for n in names)
        if ours and entry.name.endswith((".tmp", ".old", ".wal")):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
    for name in names:
        (parent / f"{name}.wal").unlink(missing_ok=True)


def _drop_wal(folder: Path) -> None:
    for wal in folder.glob("*.wal"):
        wal.unlink(missing_ok=True)
