"""Verdicts one guard worker gave, offered to the process's other workers: never looser.

Each engine has its own guard worker; the parent keeps the allowed verdicts workers send
back (``foretab.sql.verdicts``) and offers one to another worker with the same statement.
A worker uses an offered verdict only when it was reached under its own session's
fingerprint, for the same statement and row cap: these tests warm one executor, then check
that a second one adopts its verdicts, still refuses every hostile statement, and ignores
a verdict offered for another statement, another row cap or another set of tables.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from sql_stores import HISTORY_2020, HISTORY_2021
from test_guard_hostile import HOSTILE, as_params, expected_rule, refusal
from test_guard_verdict_cache import ALLOWED, PARAMS

from foretab.errors import GuardError
from foretab.sql.guard import GuardedExecutor
from foretab.sql.verdicts import VERDICTS
from foretab.sql.worker import QueryRequest, Verdict


def _counts(guard: GuardedExecutor) -> tuple[int, int]:
    """(statements the guard's worker checked afresh, verdicts it adopted) in its session."""
    assert guard._worker is not None
    reply = guard._worker.call("counts", 30.0)
    assert isinstance(reply, tuple)
    return reply


def _run_allowed(guard: GuardedExecutor) -> None:
    for i, sql in enumerate(ALLOWED):
        guard.execute(sql, PARAMS.get(i, ()))


@pytest.fixture
def two_guards(store):
    VERDICTS.clear()
    with (
        GuardedExecutor(store.db, timeout_s=2.0) as first,
        GuardedExecutor(store.db, timeout_s=2.0) as second,
    ):
        yield first, second
    VERDICTS.clear()


def test_a_second_worker_adopts_the_first_ones_verdicts(two_guards) -> None:
    first, second = two_guards
    _run_allowed(first)
    assert _counts(first) == (len(ALLOWED), 0)
    before = [second.execute(sql, PARAMS.get(i, ())) for i, sql in enumerate(ALLOWED)]
    assert _counts(second) == (0, len(ALLOWED))
    again = [first.execute(sql, PARAMS.get(i, ())) for i, sql in enumerate(ALLOWED)]
    assert [(r.sql, r.rows) for r in before] == [(r.sql, r.rows) for r in again]


@pytest.fixture(scope="module")
def warm_pair(store):
    """Two guards of one store, the second warmed with the first's verdicts (module-wide)."""
    VERDICTS.clear()
    with (
        GuardedExecutor(store.db, timeout_s=2.0) as first,
        GuardedExecutor(store.db, timeout_s=2.0) as second,
    ):
        _run_allowed(first)
        _run_allowed(second)
        assert _counts(second) == (0, len(ALLOWED))
        yield first, second
    VERDICTS.clear()


@pytest.mark.parametrize(("statement", "duck_rule", "pg_rule"), as_params(HOSTILE))
def test_every_hostile_statement_is_refused_by_a_worker_offered_verdicts(
    store, warm_pair, statement, duck_rule, pg_rule
) -> None:
    first, second = warm_pair
    expected = expected_rule(store, duck_rule, pg_rule)
    for guard in (first, second, first):
        refused = refusal(guard, statement, store)
        assert refused.rule == expected, refused.message


def _forged(guard: GuardedExecutor, sql: str, known: Verdict) -> object:
    """Send ``sql`` to ``guard``'s worker with ``known`` offered as its verdict."""
    assert guard._worker is not None
    request = QueryRequest(
        sql=sql,
        params=(),
        prepare_only=False,
        max_rows=guard.max_rows,
        max_result_bytes=guard.limits.max_result_bytes,
        timeout_s=2.0,
        known=known,
    )
    return guard._send(request)


def test_a_verdict_offered_for_another_statement_is_not_used(two_guards) -> None:
    first, second = two_guards
    allowed = f"SELECT count(*) AS n FROM {HISTORY_2021}"
    first.execute(allowed)
    verdict = VERDICTS.get(first._fingerprint, allowed, first.max_rows)
    assert verdict is not None
    hostile = f"SELECT * FROM {HISTORY_2021}; DROP TABLE {HISTORY_2021}"
    # The allowed statement's verdict, offered with a hostile text: checked afresh.
    with pytest.raises(GuardError):
        _forged(second, hostile, verdict)


@pytest.mark.parametrize("changed", ["fingerprint", "max_rows", "source"])
def test_a_verdict_that_differs_in_one_input_is_checked_afresh(two_guards, changed) -> None:
    first, second = two_guards
    allowed = f"SELECT max(price) AS top FROM {HISTORY_2021}"
    first.execute(allowed)
    verdict = VERDICTS.get(first._fingerprint, allowed, first.max_rows)
    assert verdict is not None
    forged = {
        "fingerprint": replace(verdict, fingerprint="0" * 32),
        "max_rows": replace(verdict, max_rows=verdict.max_rows + 1),
        "source": replace(verdict, source="0" * 32),
    }[changed]
    _forged(second, allowed, forged)
    assert _counts(second) == (1, 0)  # not adopted: checked afresh
    _forged(second, allowed, verdict)
    assert _counts(second) == (1, 0)  # and remembered by the session itself from then on


def test_a_worker_with_fewer_tables_is_offered_nothing(store) -> None:
    VERDICTS.clear()
    sql = f"SELECT count(*) AS n FROM {HISTORY_2020}"
    with (
        GuardedExecutor(store.db, timeout_s=2.0) as wide,
        GuardedExecutor(store.db, allowed_tables=[HISTORY_2021], timeout_s=2.0) as narrow,
    ):
        wide.execute(sql)
        assert wide._fingerprint != narrow._fingerprint
        with pytest.raises(GuardError) as caught:
            narrow.execute(sql)
        assert caught.value.rule == "unknown-table"
        assert _counts(narrow) == (0, 0)
    VERDICTS.clear()
