"""The guard's worker process: parses, checks and runs guarded statements under hard limits.

Started by ``foretab.sql.pool`` with ``main([IN_FD, OUT_FD, MEMORY_BYTES])``;
it caps its own address space (``RLIMIT_AS``) before touching a store, then serves one
store session at a time over a pipe. The parent kills it at the hard deadline, so
nothing here — parsing, planning, a regex over a huge string — can outlive the limit.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import os
import resource
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Literal

import sqlglot
from sqlglot import exp

from foretab.backend.base import Rows
from foretab.core.recent import Recent
from foretab.errors import ForetabError, GuardError, QueryError, QueryTimeoutError, StoreError
from foretab.sql.forecast_call import ForecastCall, ForecastRows, ForecastSupport
from foretab.sql.result import QueryResult
from foretab.sql.shapes import Shape, ShapeBook, shape_of
from foretab.sql.statement import checked_query

FailureKind = Literal["guard", "query", "store", "timeout"]


@dataclass(frozen=True, slots=True)
class OpenRequest:
    """Open a store's history database for guarded queries."""

    backend: str
    target: str
    timeout_s: float
    allowed_tables: tuple[str, ...] | None
    memory_bytes: int
    generation: str | None = None  # PostgreSQL: the store generation to pin (None: current)


@dataclass(frozen=True, slots=True)
class DescribeRequest:
    """Send a DuckDB store's metadata and catalog (``StoreDescription``).

    So the engine's process need not open the file itself (``foretab.engine.context``):
    answered before the session's open checks the store, which the parent then asks for
    with the described generation while it builds its indexes from the description.
    """

    target: str
    memory_bytes: int


@dataclass(frozen=True, slots=True)
class StoreDescription:
    """What the engine's process reads of a store when it opens it.

    Every row of its metadata and of its catalog (in ``foretab.store.stores.CATALOG_COLUMNS``
    order, sorted as ``HistoryStore.catalog`` sorts it), read by the worker from the
    database it opened. The parent checks them as it checks its own reads.
    """

    meta: tuple[tuple[Any, Any], ...]
    catalog: tuple[tuple[Any, ...], ...]


@dataclass(frozen=True, slots=True)
class Opened:
    """The session is ready: who it runs as and what it may read."""

    role: str
    allowed_tables: tuple[str, ...]
    reserved_names: tuple[str, ...]
    #: what a check depends on besides the statement (``Verdict.fingerprint``)
    fingerprint: str = ""


@dataclass(frozen=True, slots=True)
class Verdict:
    """An allowed statement, checked and capped: what a fresh check would produce again.

    ``text`` is the checked SQL (the trace's), ``driver_sql`` what the driver runs, with
    ``placeholders`` markers for the caller's parameters. A check is a function of the
    statement (``source``: its digest, ``source_digest``), the row cap and the session's
    ``fingerprint`` (backend, dialect, role, generation, allowed tables, reserved names):
    another session with the same fingerprint would give the same verdict to the same
    statement and cap.
    """

    text: str
    driver_sql: str
    placeholders: int
    fingerprint: str
    source: str
    max_rows: int


def source_digest(sql: str) -> str:
    """The digest that names a statement's text in a ``Verdict``."""
    return hashlib.blake2b(sql.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@dataclass(frozen=True, slots=True)
class Checked:
    """A reply whose statement was checked afresh, with the verdict the session keeps.

    The parent keeps it too (``foretab.sql.guard``), for its other sessions of the same
    fingerprint: ``QueryRequest.known``.
    """

    reply: object
    verdict: Verdict


@dataclass(frozen=True, slots=True)
class QueryRequest:
    """Check (and unless ``prepare_only``, run) one statement."""

    sql: str | exp.Expression
    params: tuple[Any, ...]
    prepare_only: bool
    max_rows: int
    max_result_bytes: int
    timeout_s: float
    #: the executor can forecast (``forecast()`` calls are refused without it)
    forecast: ForecastSupport | None = None
    #: the rows of the statement's forecast calls, once the parent computed them
    forecasts: tuple[ForecastRows, ...] | None = None
    #: this statement's verdict from another session of the parent (used only if its
    #: fingerprint, statement digest and row cap are this session's and this request's)
    known: Verdict | None = None


@dataclass(frozen=True, slots=True)
class NeedsForecasts:
    """The statement checked and has ``forecast()`` calls: compute them, then send it again."""

    calls: tuple[ForecastCall, ...]


@dataclass(frozen=True, slots=True)
class Prepared:
    """The capped statement that would run."""

    sql: str


@dataclass(frozen=True, slots=True)
class Failure:
    """A refusal or failure, rebuilt as the matching ``ForetabError`` by the parent."""

    kind: FailureKind
    message: str
    rule: str = ""
    fatal: bool = False  # the worker exits after sending it (e.g. memory exhausted)

    @classmethod
    def of(cls, error: ForetabError) -> Failure:
        if isinstance(error, GuardError):
            prefix = f"refused ({error.rule}): "
            inner = error.message.removeprefix(prefix)
            return cls("guard", inner, error.rule)
        if isinstance(error, StoreError):
            return cls("store", error.message)
        if isinstance(error, QueryTimeoutError):
            return cls("timeout", error.message)
        return cls("query", error.message)

    def error(self) -> ForetabError:
        if self.kind == "guard":
            return GuardError(self.rule, self.message)
        if self.kind == "store":
            return StoreError(self.message)
        if self.kind == "timeout":
            return QueryTimeoutError(self.message)
        return QueryError(self.message)


CATALOG_TABLE = "foretab_catalog"
# A store from elsewhere may define views or macros (they run whatever SQL they hold, and
# a user function could shadow an allowlisted name): the guard serves plain tables only.
_BASE_TABLES_SQL = {
    "duckdb": "SELECT table_name FROM duckdb_tables() WHERE NOT internal AND NOT temporary",
    "postgres": "SELECT c.relname FROM pg_catalog.pg_class AS c JOIN pg_catalog.pg_namespace "
    "AS n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'",
}
_USER_FUNCTIONS_SQL = {
    "duckdb": "SELECT function_name FROM duckdb_functions() WHERE NOT internal",
    "postgres": "SELECT p.proname FROM pg_catalog.pg_proc AS p JOIN pg_catalog.pg_namespace "
    "AS n ON n.oid = p.pronamespace WHERE n.nspname = 'public' "
    "OR n.nspname = ANY (current_schemas(false))",
}


#: Checked statements a session remembers (its ``allowed`` verdicts, least recent dropped).
VERDICT_CACHE_SIZE = 512


class _Session:
    """One open history database.

    Checking a statement (parse, rules, cap, render) costs about 2 ms, more than DuckDB
    takes to run the engine's own history reads; the engine sends the same statement text
    over and over with other parameters. So a session remembers its *allowed* verdicts,
    keyed by the exact text and row cap: the check is a function of those, the session's
    allowed tables and reserved names (fixed for its store generation) and the dialect, so a
    remembered verdict is the one a fresh check would give. Refusals are not remembered (a
    refused text is checked again each time) and neither is a statement that calls
    ``forecast()`` (its rows are bound per call).
    """

    def __init__(self, request: OpenRequest, watchdog: _Watchdog) -> None:
        from foretab.backend import get_backend

        backend = get_backend(request.backend)
        self.dialect = backend.dialect
        self.conn = backend.connect(
            request.target,
            purpose="guard",
            timeout_s=request.timeout_s,
            memory_bytes=request.memory_bytes,
            generation=request.generation,
        )
        self.watchdog = watchdog
        while _preopened:  # this session's connection keeps the database open now
            _preopened.pop().close()
        try:
            self._check_side(request.target, request.generation)
            tables = request.allowed_tables
            if tables is None:
                tables = tuple(self._catalog_tables(request.target))
            self.allowed = frozenset(t.lower() for t in tables) | {CATALOG_TABLE}
            self.reserved = self.conn.relation_names()
            self._verdicts: Recent[tuple[str, int], Verdict] = Recent(VERDICT_CACHE_SIZE)
            self.fingerprint = _fingerprint(
                request, self.dialect, self.conn.role, self.allowed, self.reserved
            )
            #: statements checked afresh, verdicts taken from ``QueryRequest.known``, and
            #: verdicts of a known shape
            self.checked = self.adopted = self.shaped = 0
            # Shapes need the checked text to be what the driver runs (DuckDB's; PostgreSQL's
            # driver text has numbered markers): the others check each new text afresh.
            self._shapes = ShapeBook(self.dialect) if backend.renders_dialect_text else None
        except BaseException:
            self.conn.close()
            raise

    def opened(self) -> Opened:
        return Opened(
            self.conn.role,
            tuple(sorted(self.allowed)),
            tuple(sorted(self.reserved)),
            self.fingerprint,
        )

    def _check_side(self, target: str, generation: str | None) -> None:
        """Refuse a future store as history, and a generation other than the store's.

        The side is in the metadata; a guard opened for an open store reads that store's
        generation or nothing.
        """
        from foretab.backend import column, param, table
        from foretab.store.location import StoreLocation
        from foretab.store.naming import GENERATION_KEY, META_TABLE, SIDE_KEY
        from foretab.store.stores import check_side

        query = (
            exp.select(column("key"), column("value"))
            .from_(table(META_TABLE))
            .where(column("key").isin(param(), param()))
        )
        try:
            meta = dict(self.conn.fetch(query, [SIDE_KEY, GENERATION_KEY]).rows)
        except QueryError:
            meta = {}  # PostgreSQL's reader may not read the metadata; its grants decide
        marked = meta.get(SIDE_KEY)
        check_side(StoreLocation.parse(target), "history", None if marked is None else str(marked))
        found = meta.get(GENERATION_KEY)
        if generation and found and str(found) != generation:
            # DuckDB: the path now leads to a newer ingest's files (PostgreSQL pins instead).
            raise StoreError(
                f"{_printable(target)} was replaced by another ingest after the store was "
                "opened; open the store again (restart the command or `foretab serve`)"
            )

    def _catalog_tables(self, target: str) -> list[str]:
        from foretab.backend import column, table
        from foretab.store.naming import is_table_name

        query = exp.select(column("table_name")).from_(table(CATALOG_TABLE))
        try:
            names = [row[0] for row in self.conn.fetch(query).rows]
        except QueryError as error:
            raise StoreError(
                f"{_printable(target)} has no readable {CATALOG_TABLE} table "
                f"({error.message}); is it a foretab store? Build one with "
                "`foretab ingest PATH --db DB`"
            ) from None
        bad = [name for name in names if not is_table_name(name)]
        bad += sorted(set(names) - self._base_tables())
        bad += [f"{name}()" for name in self._user_functions()]
        if bad:
            raise StoreError(
                f"{CATALOG_TABLE} of {_printable(target)} lists {bad[0]!r:.80}, which is not a "
                "foretab data table (or the store defines views or functions); the store was "
                "not written by foretab. Rebuild it with `foretab ingest PATH --db DB`"
            )
        return names

    def _base_tables(self) -> set[str]:
        """Plain tables of the store: a view or macro named like a price table is refused."""
        read_with_relations = getattr(self.conn, "base_table_names", None)
        if read_with_relations is not None:  # DuckDB: one scan serves both reads
            return set(read_with_relations())
        sql = _BASE_TABLES_SQL[self.dialect]
        return {str(r[0]) for r in self.conn.fetch(sqlglot.parse_one(sql, read=self.dialect)).rows}

    def _user_functions(self) -> list[str]:
        sql = _USER_FUNCTIONS_SQL[self.dialect]
        return [str(r[0]) for r in self.conn.fetch(sqlglot.parse_one(sql, read=self.dialect)).rows]

    def run(self, request: QueryRequest) -> QueryResult | Prepared | NeedsForecasts | Checked:
        started = time.perf_counter()
        # The engine is asked to stop at the limit; the parent kills this process soon
        # after if it does not (planning, or work the engine cannot interrupt).
        self.watchdog.arm(started + request.timeout_s, self.conn.interrupt)
        try:
            return self._run(request, started)
        except QueryError:
            if self.watchdog.fired:
                raise QueryTimeoutError("the query hit its time limit") from None
            raise
        finally:
            self.watchdog.disarm()

    def _run(
        self, request: QueryRequest, started: float
    ) -> QueryResult | Prepared | NeedsForecasts | Checked:
        key = (request.sql, request.max_rows) if isinstance(request.sql, str) else None
        verdict = None if key is None else self._verdicts.get(key)
        fresh = False
        shape = None
        if verdict is None and key is not None:
            verdict = self._adopted(request.known, key)
            if verdict is None and self._shapes is not None:
                shape = shape_of(key[0], self.dialect, self.allowed)
                verdict = None if shape is None else self._shaped(shape, key)
                fresh = verdict is not None  # the parent keeps it for its other sessions
        if verdict is None:
            checked = self._checked(request, started)
            if not isinstance(checked, Verdict):
                return checked
            verdict, fresh = checked, key is not None
            if shape is not None and self._shapes is not None:
                self._shapes.learn(shape, request.max_rows, verdict.text, verdict.placeholders)
        if key is not None:
            self._verdicts.put(key, verdict)
        reply = self._with_verdict(request, verdict, started)
        return Checked(reply, verdict) if fresh else reply

    def _adopted(self, known: Verdict | None, key: tuple[str, int]) -> Verdict | None:
        """``known`` if it is this statement's verdict under this session's check, else None.

        The parent sends only verdicts its other sessions' workers gave (``Checked``); the
        fingerprint says the check had the same inputs, so it is the verdict this session
        would reach itself. Anything else is ignored and the statement checked afresh.
        """
        if known is None:
            return None
        sql, max_rows = key
        if (
            known.fingerprint != self.fingerprint
            or known.max_rows != max_rows
            or known.source != source_digest(sql)
        ):
            return None
        self.adopted += 1
        return known

    def _shaped(self, shape: Shape, key: tuple[str, int]) -> Verdict | None:
        """The verdict of a statement of an allowed ``shape`` (``foretab.sql.shapes``)."""
        assert self._shapes is not None
        found = self._shapes.checked_text(shape, key[1])
        if found is None:
            return None
        text, placeholders = found
        self.shaped += 1
        return Verdict(text, text, placeholders, self.fingerprint, source_digest(key[0]), key[1])

    def _with_verdict(
        self, request: QueryRequest, verdict: Verdict, started: float
    ) -> QueryResult | Prepared:
        if request.prepare_only:
            return Prepared(verdict.text)
        if verdict.placeholders != len(request.params):
            raise QueryError(
                f"the query has {verdict.placeholders} placeholder(s) but "
                f"{len(request.params)} parameter(s) were given; pass one value per '?'"
            )
        rows = self.conn.fetch_text(
            verdict.driver_sql,
            list(request.params),
            max_rows=request.max_rows,
            max_bytes=request.max_result_bytes,
        )
        return _result(rows, verdict.text, started)

    def _checked(
        self, request: QueryRequest, started: float
    ) -> Verdict | QueryResult | Prepared | NeedsForecasts:
        """A fresh check: the verdict of a plain statement, or a forecast statement's reply."""
        checked = checked_query(
            request.sql,
            self.dialect,
            self.allowed,
            self.reserved,
            request.max_rows + 1,
            request.forecast,
            request.forecasts,
        )
        query, text = checked.query, checked.text
        n_placeholders = sum(1 for _ in query.find_all(exp.Placeholder)) - len(checked.params)
        if not checked.calls:
            backend = self.conn.backend
            # ``text`` is the dialect's text without comments, '?' markers checked unnamed.
            driver_sql = text if backend.renders_dialect_text else backend.render(query)
            self.checked += 1
            return Verdict(
                text,
                driver_sql,
                n_placeholders,
                self.fingerprint,
                source_digest(request.sql) if isinstance(request.sql, str) else "",
                request.max_rows,
            )
        if request.prepare_only:
            return Prepared(text)
        if not checked.bound:
            return NeedsForecasts(checked.calls)
        if n_placeholders != len(request.params):
            raise QueryError(
                f"the query has {n_placeholders} placeholder(s) but {len(request.params)} "
                "parameter(s) were given; pass one value per '?'"
            )
        rows = self.conn.fetch(
            query,
            (*checked.params, *request.params),
            max_rows=request.max_rows,
            max_bytes=request.max_result_bytes,
        )
        return _result(rows, text, started)

    def close(self) -> None:
        self.watchdog.disarm()
        self.conn.close()


def _result(rows: Rows, sql: str, started: float) -> QueryResult:
    """The reply for rows a checked statement returned (``sql``: the checked text)."""
    return QueryResult(
        columns=rows.columns,
        rows=rows.rows,
        truncated=rows.more,
        elapsed_s=time.perf_counter() - started,
        sql=sql,
        truncated_by=("bytes" if rows.by_bytes else "rows") if rows.more else "",
    )


#: The watchdog's stack: it only waits and calls ``interrupt`` (the default is 8 MiB of
#: address space, counted against the worker's memory cap).
WATCHDOG_STACK_BYTES = 512 * 1024


class _Watchdog:
    """One thread per worker that interrupts the running statement at its deadline.

    (A ``threading.Timer`` per query would start a thread per query: measurable latency.)
    It starts with the worker, before any store is open: a pooled worker serves session
    after session, and a thread started later, with the engine's memory mapped, could
    fail under the address-space cap ("can't start new thread", seen in the test suite
    once in about ten runs after an out-of-memory query).
    """

    def __init__(self) -> None:
        self._interrupt: Callable[[], None] | None = None
        self._cond = threading.Condition()
        self._deadline: float | None = None
        self.fired = False
        previous = threading.stack_size(WATCHDOG_STACK_BYTES)
        try:
            threading.Thread(target=self._loop, daemon=True, name="foretab-guard-watchdog").start()
        finally:
            threading.stack_size(previous)

    def arm(self, deadline: float, interrupt: Callable[[], None]) -> None:
        with self._cond:
            self._deadline, self.fired, self._interrupt = deadline, False, interrupt
            self._cond.notify()

    def disarm(self) -> None:
        with self._cond:
            self._deadline = None

    def _loop(self) -> None:
        with self._cond:
            while True:  # a daemon thread: it ends with the worker
                if self._deadline is None:
                    self._cond.wait()
                    continue
                left = self._deadline - time.perf_counter()
                if left > 0:
                    self._cond.wait(left)
                    continue
                self._deadline, self.fired = None, True
                if self._interrupt is not None:
                    self._interrupt()


def _printable(target: str) -> str:
    if target.startswith(("postgresql://", "postgres://")):
        from foretab.backend.postgres import redact

        return redact(target)
    return repr(target)


def _fingerprint(
    request: OpenRequest,
    dialect: str,
    role: str,
    allowed: Collection[str],
    reserved: Collection[str],
) -> str:
    """Everything a statement's check depends on besides the statement and its row cap."""
    parts = (
        request.backend,
        dialect,
        role,
        request.target,
        request.generation or "",
        "\x1f".join(sorted(allowed)),
        "\x1f".join(sorted(reserved)),
    )
    digest = hashlib.blake2b(digest_size=16)
    for part in parts:
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\x1e")
    return digest.hexdigest()


#: A DuckDB connection opened before the first request (``_preopen``), held until then.
_preopened: list[Any] = []


def _preopen(target: str, memory_bytes: int) -> None:
    """Open the DuckDB store ``target`` ahead of the request that will ask for it.

    Opening reads DuckDB's catalog of every table: 1.2 s at 100x the corpus (30,592
    tables), paid while the parent is still importing. DuckDB keeps one database instance
    per file and configuration, so the session's own ``connect`` (same purpose and memory
    cap) then finds it open; a store swapped in between is another file, opened anew.
    Nothing is checked here: the session's open checks everything, and any error is its.
    """
    from foretab.backend import get_backend

    try:
        conn = get_backend("duckdb").connect(target, purpose="guard", memory_bytes=memory_bytes)
    except Exception:  # the session's own open reports it
        return
    _preopened.append(conn)


def _limit_memory(memory_bytes: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _describe(request: DescribeRequest) -> StoreDescription:
    """A DuckDB store's metadata and catalog rows: the reads ``HistoryStore`` makes at open.

    On a connection of its own, kept like a preopened one (``_preopen``) until the
    session that follows has its own: that session checks the store and the generation.
    """
    from foretab.backend import get_backend
    from foretab.store.stores import catalog_query, meta_query

    conn = get_backend("duckdb").connect(
        request.target, purpose="guard", memory_bytes=request.memory_bytes
    )
    try:
        meta = conn.fetch(meta_query()).rows
        catalog = conn.fetch(catalog_query()).rows
    except QueryError as error:
        conn.close()
        raise StoreError(
            f"{_printable(request.target)} is not a foretab store ({error.message}). "
            "Create it with `foretab ingest PATH --db DB`."
        ) from None
    _preopened.append(conn)
    return StoreDescription(tuple(meta), tuple(catalog))


@contextlib.contextmanager
def _kept_objects() -> Iterator[None]:
    """No garbage collection while a store is described or opened; what it built is frozen.

    At 100x the corpus they build ~200,000 objects (the catalog's rows, every table name
    twice) that the session keeps: a full collection walks them all and frees nothing
    (0.1 s or more each). Frozen, they are out of the collector's reach and still freed by
    reference counting when the session ends.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def _handle(
    session: _Session | None, message: object, watchdog: _Watchdog
) -> tuple[_Session | None, object]:
    """One request -> (the session afterwards, the reply)."""
    if isinstance(message, DescribeRequest):
        with _kept_objects():
            return session, _describe(message)
    if isinstance(message, OpenRequest):
        if session is not None:
            session.close()
        with _kept_objects():
            session = _Session(message, watchdog)
        return session, session.opened()
    if isinstance(message, QueryRequest):
        if session is None:
            raise QueryError("no store is open in the guard worker; open a GuardedExecutor")
        return session, session.run(message)
    if message == "close":
        if session is not None:
            session.close()
        return None, "closed"
    if message == "counts":  # statements this session checked afresh, verdicts it adopted
        return session, (0, 0) if session is None else (session.checked, session.adopted)
    if message == "shaped":  # verdicts this session gave statements of a known shape
        return session, 0 if session is None else session.shaped
    raise QueryError(f"unknown request {type(message).__name__} to the guard worker")


def serve(
    inbox: Connection, outbox: Connection, memory_bytes: int, preopen: str | None = None
) -> None:
    """Answer requests until the parent closes the pipe."""
    _limit_memory(memory_bytes)
    if preopen is not None:
        _preopen(preopen, memory_bytes)
    watchdog = _Watchdog()
    session: _Session | None = None
    while True:
        try:
            message = inbox.recv()
        except (EOFError, OSError):
            return
        if message == "close" and session is not None:
            # Answered first: closing DuckDB's last connection to a file frees its catalog
            # (0.6 to 0.9 s at 100x the corpus), which the parent need not wait for (it
            # may be about to exit; a later request waits for the close to finish).
            outbox.send("closed")
            session, closing = None, session
            with contextlib.suppress(Exception):  # the next session opens its own connection
                closing.close()
            continue
        fatal = False
        try:
            session, reply = _handle(session, message, watchdog)
        except ForetabError as error:
            reply = Failure.of(error)
        except MemoryError:
            fatal = True
            reply = Failure(
                "query",
                "the query ran out of memory (the guard's cap is "
                f"{memory_bytes / 2**30:g} GiB) and was stopped; narrow it",
                fatal=True,
            )
        except RecursionError:
            reply = Failure(
                "guard", "the statement is nested too deeply to check; simplify it", "parse-error"
            )
        except Exception as error:
            reply = Failure("query", f"the guard worker failed: {type(error).__name__}: {error}")
        try:
            outbox.send(reply)
        except MemoryError:
            fatal = True
            outbox.send(Failure("query", "the result did not fit in memory; narrow it", fatal=True))
        if fatal:
            return


def main(argv: Collection[str] | None = None) -> None:
    """Serve on the pipe file descriptors ``IN_FD OUT_FD`` under ``MEMORY_BYTES``.

    An optional fourth argument is a DuckDB store to open before the first request.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    in_fd, out_fd, memory = (int(a) for a in args[:3])
    # Nothing may write to the protocol pipe but ``serve``: stray prints go to stderr.
    os.dup2(2, 1)
    inbox, outbox = Connection(in_fd, writable=False), Connection(out_fd, readable=False)
    serve(inbox, outbox, memory, preopen=args[3] if len(args) > 3 else None)
