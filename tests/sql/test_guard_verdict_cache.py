"""The guard's worker remembers allowed statements: exactly as strict as a fresh check.

A session keys an allowed verdict by the statement's exact text and row cap; refusals are
never remembered. These tests warm the cache with allowed statements, then send every
hostile statement of the hostile suite, and each allowed statement with something hostile
added, and expect the same refusals a cold guard gives.
"""

from __future__ import annotations

import pytest
from sql_stores import FUTURE_2022, HISTORY_2021
from test_guard_hostile import HOSTILE, as_params, expected_rule, refusal

from foretab.errors import GuardError, QueryError
from foretab.sql.guard import GuardedExecutor

ALLOWED = [
    f"SELECT project_name, month, price FROM {HISTORY_2021} WHERE project_name = ?",
    f"SELECT count(*) AS n FROM {HISTORY_2021}",
    "SELECT table_name, year FROM foretab_catalog ORDER BY year",
    f"WITH t AS (SELECT * FROM {HISTORY_2021}) SELECT max(price) AS top FROM t",
]
PARAMS = {0: ("Poly Central Park",)}
# Appended to an allowed (and remembered) statement: each must be refused all the same.
SUFFIXES = [
    "; DROP TABLE foretab_catalog",
    f" UNION ALL SELECT * FROM {FUTURE_2022}",
    "; ATTACH 'x.duckdb' AS x",
    "; COPY foretab_catalog TO 'out.csv'",
]


def _warm(guard: GuardedExecutor, times: int = 3) -> None:
    for _ in range(times):
        for i, sql in enumerate(ALLOWED):
            guard.execute(sql, PARAMS.get(i, ()))


@pytest.fixture(scope="module")
def warm_guard(store, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"verdict-cwd-{store.backend}")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        with GuardedExecutor(store.db, timeout_s=2.0) as guard:
            _warm(guard)
            yield guard


@pytest.mark.parametrize(("statement", "duck_rule", "pg_rule"), as_params(HOSTILE))
def test_every_hostile_statement_is_refused_after_warm_up(
    store, warm_guard, statement, duck_rule, pg_rule
) -> None:
    expected = expected_rule(store, duck_rule, pg_rule)
    for _ in range(2):  # a refusal is not remembered as anything: the second is refused too
        refused = refusal(warm_guard, statement, store)
        assert refused.rule == expected, refused.message
    _warm(warm_guard, times=1)  # and the allowed ones still run


@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize("allowed", range(len(ALLOWED)))
def test_an_allowed_statement_with_something_added_is_checked_afresh(
    warm_guard, allowed: int, suffix: str
) -> None:
    with pytest.raises((GuardError, QueryError)):
        warm_guard.execute(ALLOWED[allowed] + suffix, PARAMS.get(allowed, ()))


def test_the_row_cap_is_part_of_the_verdict(store) -> None:
    sql = f"SELECT project_name FROM {HISTORY_2021}"
    with (
        GuardedExecutor(store.db, max_rows=3) as small,
        GuardedExecutor(store.db, max_rows=5) as big,
    ):
        for _ in range(2):  # the second of each is the remembered verdict
            assert small.prepare(sql).endswith("LIMIT 4") and big.prepare(sql).endswith("LIMIT 6")
            assert len(small.execute(sql).rows) == 3 and small.execute(sql).truncated
            assert len(big.execute(sql).rows) == 5


def test_a_remembered_statement_still_checks_its_parameter_count(warm_guard) -> None:
    with pytest.raises(QueryError, match="placeholder"):
        warm_guard.execute(ALLOWED[0], ())
    with pytest.raises(QueryError, match="placeholder"):
        warm_guard.execute(ALLOWED[0], ("a", "b"))


def test_remembered_and_fresh_results_are_the_same(store) -> None:
    with GuardedExecutor(store.db) as guard:
        first = guard.execute(ALLOWED[0], PARAMS[0])
        again = guard.execute(ALLOWED[0], PARAMS[0])
    assert (first.columns, first.rows, first.sql) == (again.columns, again.rows, again.sql)
