"""Shared fixtures: a throwaway PostgreSQL server on loopback, the shared data folder.

The PostgreSQL cluster is started once per test session (``pg_server``) from Debian's
server binaries; tests that need it are skipped with a clear message only where no
server binary exists (``.ci/run`` installs one, so CI runs them).
"""

from __future__ import annotations

import atexit
import gc
import itertools
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

# The fake OpenAI-compatible server fixture, for every test folder (LLM engines, table QA).
from tests.llm.fake_openai import fake_openai  # noqa: F401
from tests.shared import SHARED, shared_path

# Write bytecode caches even where PYTHONDONTWRITEBYTECODE is set (it is on the development
# machines): without them both xdist workers recompile the package and rewrite the asserts
# of ~200 test modules on every run (~1.7 s of each one's collection), and every guard
# worker and CLI subprocess a test starts compiles foretab again. (Git ignores __pycache__.)
sys.dont_write_bytecode = False

# At exit, move every object into the collector's permanent generation, so the interpreter's
# own full collections while it tears the modules down have nothing to walk. With torch,
# LightGBM, pandas and foretab loaded (millions of objects) those passes took ~2 s of each
# xdist worker's exit and ~0.6 s of the controller's, after the last test. It runs after
# pytest's own last collection (which reports unraisable exceptions) and, registered this
# early, after the atexit handlers of everything imported later (foretab's worker pools,
# weakref.finalize); objects are still freed by reference counting, only cycles are left
# for the operating system to reclaim with the process.
atexit.register(gc.freeze)

REPO_ROOT = Path(__file__).resolve().parent.parent


def _cache_cli_commands() -> None:
    """Typer's ``CliRunner.invoke(app, ...)`` builds the whole click command tree from the
    app on every call (~35 ms for foretab's ~30 commands; the fast suite invokes it ~140
    times). Build it once per app and set of registered commands: a command or group added
    later (``register_commands()``) gives a new tree. What runs is the click command that
    Typer builds; only the rebuilding is skipped.
    """
    import typer.testing

    build = typer.testing._get_command
    built: dict[tuple[object, ...], object] = {}

    def registered(app: typer.Typer) -> tuple[object, ...]:
        # The objects themselves (hashed by identity), so the key keeps them alive: an id
        # cannot be reused by another app.
        groups = tuple(
            (g, registered(g.typer_instance))
            for g in app.registered_groups
            if g.typer_instance is not None
        )
        return (app, app.registered_callback, tuple(app.registered_commands), groups)

    def get_command(app: typer.Typer) -> object:
        key = registered(app)
        if key not in built:
            built[key] = build(app)
        return built[key]

    typer.testing._get_command = get_command  # type: ignore[assignment]


_cache_cli_commands()

SHARED_DATA = SHARED / "data"

PG_MISSING = "PostgreSQL server binaries not found; install Debian's postgresql package"


def _ram_temp_root() -> str | None:
    """A RAM-backed temp folder (Linux's ``/dev/shm``) with room to spare, else None.

    The tests write and delete many small stores: PostgreSQL databases, DuckDB files,
    generations. On the development machines' disk (ext4 mounted with ``discard``) deleting
    is slow enough to dominate: removing one worker's 330 MB PostgreSQL cluster at the end
    of the session took 20 s, and ``tests/store`` ran 71 s instead of 30 s.
    """
    shm = Path("/dev/shm")
    try:
        stat = os.statvfs(shm)
    except OSError:
        return None
    if not os.access(shm, os.W_OK) or stat.f_bavail * stat.f_frsize < 4 * 2**30:
        return None
    return str(shm)


RAM_TEMP_ROOT = _ram_temp_root()
if RAM_TEMP_ROOT is not None:
    # pytest's own knob for where tmp_path / tmp_path_factory live (read lazily, so setting
    # it while the root conftest loads is in time); an explicit setting wins.
    os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", RAM_TEMP_ROOT)


# ---- how `-n 2` shares the tests out ------------------------------------------------------
# xdist's default (`--dist load`) deals tests out one chunk at a time, so both workers run
# some tests of most modules and each builds that module's fixtures, and every expensive
# session fixture, for itself. Here the unit of work is a module, and modules that share an
# expensive session fixture are one unit, so it is built once: the bench dataset (~7 s),
# the real-corpus store (~4 s), the torch / neuralforecast import (~5 s), the real
# corpus's entity index of tests/parse (~2 s). The biggest units go first, so the small
# ones even out the end. (`--dist loadgroup` would do the grouping, but xdist 3.8 cannot
# rename pytest 9's node ids, so its groups are ignored.)
#
# Which tests use such a fixture is pytest's own answer (each item's fixture closure, read
# by the workers after collection); the workers hand it to the scheduler in the controller
# through a small file named after the controller's process id.
SHARED_FIXTURE_GROUPS = {
    "bench_store": "bench-store",
    "corpus_db": "corpus-db",
    "neural_installed": "neural",
    # tests/parse: the real corpus's entity index (~2 s)
    "corpus_index": "parse-corpus",
    "corpus_entries": "parse-corpus",
    # the mini store's units model (~1.3 s): the golden units cases, tests/engine
    "units_fit_once": "mini-units",
}


def _groups_file(controller_pid: int) -> Path:
    return Path(tempfile.gettempdir()) / f"foretab-test-groups-{controller_pid}.json"


def shared_group(fixturenames: Sequence[str]) -> str | None:
    """The work unit of a test that uses one of the expensive shared fixtures, else None."""
    return next(
        (SHARED_FIXTURE_GROUPS[f] for f in fixturenames if f in SHARED_FIXTURE_GROUPS), None
    )


@pytest.hookimpl(tryfirst=True)  # before xdist reports the collection to the controller
def pytest_collection_finish(session: pytest.Session) -> None:
    # Move every object alive now into the collector's permanent generation: the modules,
    # classes and functions imported so far (pandas, DuckDB, sqlglot, foretab, the test
    # modules) live to the end of the session, and each full collection during the tests
    # walked them all again. What the tests create is collected as before (an unraisable
    # exception in its finalizer still fails the test).
    gc.freeze()
    if not hasattr(session.config, "workerinput"):
        return
    groups = {
        item.nodeid: group
        for item in session.items
        if (group := shared_group(getattr(item, "fixturenames", ()))) is not None
    }
    path = _groups_file(os.getppid())
    part = path.with_suffix(f".{os.getpid()}.part")
    part.write_text(json.dumps(groups), encoding="utf-8")
    part.replace(path)  # both workers write the same table; a reader sees one whole


def _work_unit(nodeid: str, groups: dict[str, str]) -> str:
    group = groups.get(nodeid)
    return f"group:{group}" if group else nodeid.split("::", 1)[0]


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: fine without it (-p no:xdist)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    if config.getoption("dist") != "load":
        return None  # an explicit --dist choice is kept
    from xdist.scheduler import LoadScopeScheduling

    path = _groups_file(os.getpid())
    atexit.register(path.unlink, missing_ok=True)

    class SharedFixtureScheduling(LoadScopeScheduling):
        def __init__(self, config: pytest.Config, log: object) -> None:
            super().__init__(config, log)  # type: ignore[arg-type]
            self._groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self._groups is None:
                # Read once, when scheduling starts: every worker has collected by then.
                try:
                    self._groups = json.loads(path.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    self._groups = {}  # no table: one unit per module, still correct
            return _work_unit(nodeid, self._groups)

    return SharedFixtureScheduling(config, log)


@pytest.hookimpl(tryfirst=True)  # before `-m "not slow"` deselects by the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """``slow_variant("postgresql")``: only those variants of a test are slow.

    A test that waits on a wall-clock limit, a model fit or a server process for a second
    or more keeps one variant in the fast suite (its DuckDB twin, the zygote path) and runs
    the others with the slow suite in CI (docs/development.md, "The fast suite").
    """
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is None:
            continue
        parts = set(callspec.id.split("-"))
        if any(parts & set(mark.args) for mark in item.iter_markers("slow_variant")):
            item.add_marker(pytest.mark.slow)


def find_pg_bindir() -> Path | None:
    """The folder holding ``initdb``/``pg_ctl``/``postgres``: PATH first, then Debian's."""
    on_path = shutil.which("initdb")
    if on_path and shutil.which("pg_ctl"):
        return Path(on_path).resolve().parent
    candidates = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
        reverse=True,
    )
    for bindir in candidates:
        if (bindir / "initdb").exists() and (bindir / "pg_ctl").exists():
            return bindir
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class PgServer:
    """A running throwaway cluster; ``url(db)`` gives a connection URL for ``db``."""

    host: str
    port: int
    user: str
    datadir: Path
    _counter: Iterator[int] = field(default_factory=itertools.count)

    @property
    def base_url(self) -> str:
        """``postgresql://postgres@127.0.0.1:PORT`` (append ``/dbname``)."""
        return f"postgresql://{self.user}@{self.host}:{self.port}"

    def url(self, dbname: str = "postgres") -> str:
        return f"{self.base_url}/{dbname}"

    def fresh_dbname(self, prefix: str = "t") -> str:
        """A database name no other test in this session uses (not created)."""
        return f"{prefix}_{os.getpid()}_{next(self._counter)}"


def _as_postgres(cmd: list[str]) -> list[str]:
    # initdb refuses to run as root; the cluster must belong to an unprivileged user.
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *cmd]
    return cmd


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """Start a PostgreSQL cluster on 127.0.0.1 (trust auth, fsync off) for the session."""
    bindir = find_pg_bindir()
    if bindir is None:
        pytest.skip(PG_MISSING)
    tmp = Path(tempfile.mkdtemp(prefix="foretab-pg-", dir=RAM_TEMP_ROOT))
    datadir = tmp / "data"
    sockdir = tmp / "sock"
    datadir.mkdir()
    sockdir.mkdir()
    if os.geteuid() == 0:
        shutil.chown(tmp, "postgres", "postgres")
        shutil.chown(datadir, "postgres", "postgres")
        shutil.chown(sockdir, "postgres", "postgres")
    env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
    subprocess.run(
        _as_postgres(
            [
                str(bindir / "initdb"),
                "-D",
                str(datadir),
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--no-sync",
            ]
        ),
        check=True,
        capture_output=True,
        env=env,
    )
    port = _free_port()
    options = (
        f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={sockdir} "
        "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
        "-c max_connections=100 -c shared_buffers=32MB "
        # Every CREATE DATABASE writes its template (~7 MB) to the WAL: recycle it early,
        # so the WAL stays under ~64 MB (the cluster is in RAM, see RAM_TEMP_ROOT), not 1 GB.
        "-c min_wal_size=32MB -c max_wal_size=64MB"
    )
    logfile = tmp / "server.log"
    started = subprocess.run(
        _as_postgres(
            [
                str(bindir / "pg_ctl"),
                "-D",
                str(datadir),
                "-l",
                str(logfile),
                "-o",
                options,
                "-w",
                "-t",
                "60",
                "start",
            ]
        ),
        capture_output=True,
        env=env,
        check=False,
    )
    if started.returncode != 0:
        log = logfile.read_text() if logfile.exists() else ""
        shutil.rmtree(tmp, ignore_errors=True)
        pytest.fail(f"PostgreSQL did not start: {started.stderr.decode()}\n{log}")
    server = PgServer(host="127.0.0.1", port=port, user="postgres", datadir=datadir)
    try:
        yield server
    finally:
        subprocess.run(
            _as_postgres([str(bindir / "pg_ctl"), "-D", str(datadir), "-m", "immediate", "stop"]),
            capture_output=True,
            env=env,
            check=False,
        )
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
def pg_db(pg_server: PgServer) -> Iterator[str]:
    """A fresh, empty database URL; dropped (with its ``_future`` sibling) afterwards."""
    import psycopg

    name = pg_server.fresh_dbname()
    yield pg_server.url(name)
    with psycopg.connect(pg_server.url("postgres"), autocommit=True) as conn:
        for db in (name, f"{name}_future"):
            conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``<repo>/../shared/data``; tests needing it skip where it is absent."""
    return shared_path("data")


@pytest.fixture(params=["duckdb", pytest.param("postgresql", marks=pytest.mark.postgres)])
def empty_store_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Where a test can ingest a store, on each backend: a DuckDB path, or a fresh
    PostgreSQL database (dropped afterwards with its ``_future`` side)."""
    if request.param == "duckdb":
        yield str(tmp_path / "corpus.duckdb")
        return
    import psycopg

    server = request.getfixturevalue("pg_server")
    name = server.fresh_dbname("store")
    yield server.url(name)
    with psycopg.connect(server.url("postgres"), autocommit=True) as conn:
        for each in (name, f"{name}_future"):
            conn.execute(f'DROP DATABASE IF EXISTS "{each}" WITH (FORCE)')


@pytest.fixture(scope="session")
def units_fit_once() -> object:
    """``tests.units_fit.fit_once``: a units model fitted once per history and process."""
    from tests.units_fit import fit_once

    return fit_once


# ---- the mini store: the one small fixture corpus most fast tests run on ------------------
#: ``tests/fixtures/corpus/mini.csv`` (``make_mini.py`` beside it regenerates it); R = 2021-12,
#: so 2022 is the future store. No forecaster is trained: tests that need the model stage
#: inject one or train it on a copy.
MINI_CSV = REPO_ROOT / "tests" / "fixtures" / "corpus" / "mini.csv"
MINI_REFERENCE_MONTH = "2021-12"


def _ingest_mini(db: str) -> None:
    from foretab.core.months import Month
    from foretab.store.ingest import ingest_path

    ingest_path(MINI_CSV, db, Month.parse(MINI_REFERENCE_MONTH))


@pytest.fixture(scope="session")
def mini_duckdb(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The mini store on DuckDB, built once per session and only read by the tests."""
    db = str(tmp_path_factory.mktemp("mini") / "mini.duckdb")
    _ingest_mini(db)
    return db


@pytest.fixture(scope="session")
def mini_postgresql(pg_server: PgServer) -> Iterator[str]:
    """The mini store on the session's PostgreSQL server."""
    import psycopg

    name = pg_server.fresh_dbname("mini")
    url = pg_server.url(name)
    _ingest_mini(url)
    yield url
    with psycopg.connect(pg_server.url("postgres"), autocommit=True) as conn:
        for db in (name, f"{name}_future"):
            conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')


@pytest.fixture(params=["duckdb", "postgresql"])
def mini_db(request: pytest.FixtureRequest) -> str:
    """The mini store on each backend in turn."""
    return request.getfixturevalue(f"mini_{request.param}")
