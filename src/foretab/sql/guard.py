"""The one guarded query executor every part of foretab uses to read the history store.

A statement (SQL text or a sqlglot AST with ``?`` placeholders) is parsed, checked by the
rules in ``foretab.sql.rules``, given a row cap, regenerated for the backend's dialect
without comments (what runs is exactly what was checked) and run on a read-only
connection — all of it in a worker process (``foretab.sql.worker``) that is killed at the
hard deadline and whose memory is capped (``foretab.sql.limits``)::

    with GuardedExecutor("corpus.duckdb") as guard:
        result = guard.execute("SELECT * FROM foretab_catalog WHERE year = ?", [2021])
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from types import TracebackType
from typing import Any

from sqlglot import exp

from foretab.errors import ForetabError, GuardError, QueryError, QueryTimeoutError
from foretab.sql.connect import HistoryTarget, LocationLike, resolve_target
from foretab.sql.forecast_call import ForecastProvider
from foretab.sql.limits import (
    DEFAULT_MAX_QUERY_CHARS,
    DEFAULT_MAX_RESULT_BYTES,
    DEFAULT_MAX_ROWS,
    DEFAULT_MEMORY_BYTES,
    DEFAULT_TIMEOUT_S,
    HARD_DEADLINE_FACTOR,
    OPEN_TIMEOUT_S,
    GuardLimits,
    describe_bytes,
)
from foretab.sql.pool import DeadlineExceeded, Worker, WorkerDied, acquire, prestart, release
from foretab.sql.result import QueryResult
from foretab.sql.rules import RULES
from foretab.sql.verdicts import VERDICTS
from foretab.sql.worker import (
    Checked,
    Failure,
    NeedsForecasts,
    Opened,
    OpenRequest,
    Prepared,
    QueryRequest,
    StoreDescription,
    Verdict,
)
from foretab.store.naming import GENERATION_KEY


class GuardedExecutor:
    """Runs single read-only SELECTs over the history store's catalog tables.

    ``location`` is a ``--db`` string (DuckDB path or ``postgresql://`` URL) or a
    ``StoreLocation``; only its history store is opened. ``allowed_tables`` defaults to
    every table listed in ``foretab_catalog`` (plus the catalog itself). ``forecasts``
    computes the rows of ``forecast()`` calls (``foretab.sql.forecast_rows``); without it
    such a call is refused.
    """

    def __init__(
        self,
        location: str | LocationLike,
        allowed_tables: Collection[str] | None = None,
        *,
        max_rows: int = DEFAULT_MAX_ROWS,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
        max_query_chars: int = DEFAULT_MAX_QUERY_CHARS,
        memory_bytes: int = DEFAULT_MEMORY_BYTES,
        forecasts: ForecastProvider | None = None,
        describe: bool = False,
    ) -> None:
        self.forecasts = forecasts
        self._budget_end: float | None = None  # when the running statement's time is up
        self.limits = GuardLimits(
            timeout_s=timeout_s,
            max_rows=max_rows,
            max_result_bytes=max_result_bytes,
            max_query_chars=max_query_chars,
            memory_bytes=memory_bytes,
        )
        self.target: HistoryTarget = resolve_target(location)
        self._open_request = OpenRequest(
            backend=self.target.backend.name,
            target=self.target.history,
            timeout_s=timeout_s,
            allowed_tables=None if allowed_tables is None else tuple(allowed_tables),
            memory_bytes=memory_bytes,
            generation=self.target.generation,
        )
        self._worker: Worker | None = None
        self._closed = False
        #: ``describe``: the store's metadata and catalog rows as the worker read them
        self.store_description: StoreDescription | None = None
        self._pending: Worker | None = None  # the open request is sent, its reply not read
        if describe:
            self._describe_then_open()
        else:
            self._set_opened(self._open())

    def _set_opened(self, opened: Opened) -> None:
        self._role = opened.role
        self._allowed_tables = frozenset(opened.allowed_tables)
        self._reserved_names = frozenset(opened.reserved_names)
        self._fingerprint = opened.fingerprint

    def _describe_then_open(self) -> None:
        """DuckDB: the store's description now, the session's open sent without waiting.

        The caller builds its indexes from the description while the worker checks the
        store (0.5 s or more at 100x the corpus); ``wait_open`` (or the first use) reads
        the open's reply. The open is of the described generation, or refused.
        """
        from foretab.sql.worker import DescribeRequest

        worker = acquire(self.limits.memory_bytes)
        request = DescribeRequest(self.target.history, self.limits.memory_bytes)
        reply = _opening_reply(worker, lambda: worker.call(request, OPEN_TIMEOUT_S))
        assert isinstance(reply, StoreDescription)
        self.store_description = reply
        found = dict(reply.meta).get(GENERATION_KEY)
        # Every later open (a fresh worker after a kill too) reads this generation or fails.
        self._open_request = replace(self._open_request, generation=str(found) if found else None)
        try:
            worker.send(self._open_request)
        except QueryError:
            worker.kill()
            raise
        self._pending = worker

    def wait_open(self) -> None:
        """Read the reply to an open sent by ``_describe_then_open`` (errors: the open's)."""
        worker, self._pending = self._pending, None
        if worker is None:
            return
        reply = _opening_reply(worker, lambda: worker.receive(OPEN_TIMEOUT_S))
        assert isinstance(reply, Opened)
        self._worker = worker
        self._set_opened(reply)

    @property
    def role(self) -> str:
        """The database role the statements run as ('' for DuckDB)."""
        self.wait_open()
        return self._role

    @property
    def allowed_tables(self) -> frozenset[str]:
        """Lower-case names of the tables a statement may read."""
        self.wait_open()
        return self._allowed_tables

    @property
    def reserved_names(self) -> frozenset[str]:
        """Every relation name of the store (no CTE may shadow one)."""
        self.wait_open()
        return self._reserved_names

    # -- public API -------------------------------------------------------------------

    @property
    def max_rows(self) -> int:
        """Row cap of every result (``truncated`` says when it was hit)."""
        return self.limits.max_rows

    @property
    def timeout_s(self) -> float:
        """Seconds a statement may run before it is stopped."""
        return self.limits.timeout_s

    @property
    def dialect(self) -> str:
        """Sqlglot dialect of the backend (``duckdb`` or ``postgres``)."""
        return self.target.dialect

    def prepare(self, sql: str | exp.Expression) -> str:
        """Check ``sql`` and return the capped statement that ``execute`` would run."""
        reply = self._query(sql, (), prepare_only=True)
        assert isinstance(reply, Prepared)
        return reply.sql

    def execute(
        self, sql: str | exp.Expression, params: Sequence[Any] | None = None
    ) -> QueryResult:
        """Run one guarded query; raises ``GuardError`` (refused) or ``QueryError`` (failed)."""
        reply = self._query(sql, tuple(params or ()), prepare_only=False)
        assert isinstance(reply, QueryResult)
        return reply

    def close(self) -> None:
        """Close the session and hand the worker back (idempotent)."""
        self._closed = True
        if self._pending is not None:
            with contextlib.suppress(ForetabError):  # a failed open leaves nothing to close
                self.wait_open()
        worker, self._worker = self._worker, None
        if worker is None:
            return
        try:
            worker.call("close", OPEN_TIMEOUT_S)
        except QueryError:
            return  # killed or dead: never reused
        release(worker)

    def __enter__(self) -> GuardedExecutor:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __del__(self) -> None:
        for name in ("_worker", "_pending"):
            worker = getattr(self, name, None)
            if worker is not None:
                worker.kill()

    # -- internals --------------------------------------------------------------------

    def _open(self) -> Opened:
        worker = acquire(self.limits.memory_bytes)
        reply = _opening_reply(worker, lambda: worker.call(self._open_request, OPEN_TIMEOUT_S))
        assert isinstance(reply, Opened)
        self._worker = worker
        return reply

    def _query(
        self, sql: str | exp.Expression, params: tuple[Any, ...], *, prepare_only: bool
    ) -> object:
        if self._closed:
            raise QueryError("the executor is closed; open a new GuardedExecutor")
        if isinstance(sql, str) and len(sql) > self.limits.max_query_chars:
            raise GuardError(
                "query-size",
                f"the statement is {len(sql):,} characters long; the limit is "
                f"{self.limits.max_query_chars:,}. Shorten it (fewer literals, a join instead "
                "of a long IN list)",
            )
        if isinstance(sql, exp.Expression):
            # Sent as its text: the worker checks what it parses back, as for any caller's
            # SQL, and remembers allowed texts (the engine's reads repeat with other values).
            sql = sql.sql(dialect=self.dialect)
        outermost = self._budget_end is None
        if outermost:
            self._budget_end = time.perf_counter() + self.limits.timeout_s
        try:
            request = QueryRequest(
                sql=sql,
                params=params,
                prepare_only=prepare_only,
                max_rows=self.limits.max_rows,
                max_result_bytes=self.limits.max_result_bytes,
                timeout_s=self._time_left(),
                forecast=None if self.forecasts is None else self.forecasts.support,
                known=self._known(sql),
            )
            reply = self._send(request)
            if isinstance(reply, NeedsForecasts) and outermost:
                assert self.forecasts is not None
                # Loading the model file happens once per engine, like opening the store:
                # not the statement's time.
                loading = time.perf_counter()
                self.forecasts.load()
                assert self._budget_end is not None
                self._budget_end += time.perf_counter() - loading
                # Computed here, on the engine's side (the model is not in the worker), from
                # history read through this guard: its reads and the model's time count
                # against the statement's limit (``_budget_end``).
                rows = self.forecasts.rows(reply.calls, self)
                reply = self._send(replace(request, forecasts=rows, timeout_s=self._time_left()))
                if isinstance(reply, QueryResult):  # the time the statement took, forecasts too
                    started = self._budget_end - self.limits.timeout_s
                    reply = replace(reply, elapsed_s=time.perf_counter() - started)
            if isinstance(reply, NeedsForecasts):
                raise QueryError("a forecast's own history read cannot call forecast()")
            return reply
        finally:
            if outermost:
                self._budget_end = None

    def _known(self, sql: str) -> Verdict | None:
        """The verdict another session of this process gave ``sql``, for this worker.

        Each engine of a server has its own worker and so its own remembered verdicts;
        without this, a statement shape is checked afresh by every one of them (at 4
        engines a server's workers spent ~1.8 ms more CPU a question). Only verdicts of
        the same fingerprint are offered, and the worker uses one only if its fingerprint,
        statement digest and row cap are the worker's own (``foretab.sql.verdicts``).
        """
        self.wait_open()
        return VERDICTS.get(self._fingerprint, sql, self.limits.max_rows)

    def _time_left(self) -> float:
        """Seconds the running statement has left (its forecasts' reads share the limit)."""
        assert self._budget_end is not None
        left = self._budget_end - time.perf_counter()
        if left <= 0:
            raise self._timeout_error()
        return left

    def _send(self, request: QueryRequest) -> object:
        self.wait_open()
        if self._worker is None:
            self._open()  # the last worker was killed at a deadline: a fresh one
        worker = self._worker
        assert worker is not None
        deadline = request.timeout_s * HARD_DEADLINE_FACTOR
        try:
            reply = worker.call(request, deadline)
        except DeadlineExceeded:
            self._worker = None
            prestart(self.limits.memory_bytes)
            raise self._timeout_error() from None
        except WorkerDied:
            self._worker = None
            prestart(self.limits.memory_bytes)
            raise QueryError(
                "the query stopped the SQL guard's worker process (most likely it ran out of "
                f"memory; the cap is {describe_bytes(self.limits.memory_bytes)}); narrow it"
            ) from None
        if isinstance(reply, Checked):
            if isinstance(request.sql, str):
                VERDICTS.put(request.sql, reply.verdict)
            reply = reply.reply
        if isinstance(reply, Failure):
            if reply.fatal:
                worker.kill()
                self._worker = None
                prestart(self.limits.memory_bytes)
            error = reply.error()
            if isinstance(error, QueryTimeoutError):
                raise self._timeout_error()
            raise error
        return reply

    def _timeout_error(self) -> QueryError:
        return QueryError(
            f"the query timed out after {self.timeout_s:g} s and was interrupted; "
            "narrow it (fewer tables, a WHERE clause) or raise the limit with --timeout "
            "(GuardedExecutor(timeout_s=...))"
        )


def run_query(
    db: str | LocationLike,
    sql: str | exp.Expression,
    params: Sequence[Any] | None = None,
    *,
    max_rows: int = DEFAULT_MAX_ROWS,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> QueryResult:
    """Open a guarded executor on ``db``, run one query and close it."""
    with GuardedExecutor(db, max_rows=max_rows, timeout_s=timeout_s) as guard:
        return guard.execute(sql, params)


__all__ = [
    "DEFAULT_MAX_ROWS",
    "DEFAULT_TIMEOUT_S",
    "RULES",
    "GuardError",
    "GuardLimits",
    "GuardedExecutor",
    "QueryError",
    "QueryResult",
    "run_query",
]


def _opening_reply(worker: Worker, exchange: Callable[[], object]) -> object:
    """The worker's reply to an open or describe request, read by ``exchange``.

    A worker that did not answer is killed (its state is unknown); one that answered with
    a failure goes back to the pool, and the failure is raised.
    """
    try:
        reply = exchange()
    except QueryError as error:
        worker.kill()
        raise QueryError(
            f"the SQL guard's worker process could not open the store ({error.message}); "
            "try again, and check free memory"
        ) from None
    if isinstance(reply, Failure):
        release(worker)
        raise reply.error()
    return reply
