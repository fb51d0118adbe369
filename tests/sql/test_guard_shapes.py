"""Statements of a known shape (the same tokens, other catalog tables): never looser.

A DuckDB session gives a statement whose tokens are those of an allowed one with other
catalog table names the allowed one's checked text with its own names
(``foretab.sql.shapes``). These tests warm a guard with allowed statements, then send the
same statements over the other year's table (and its tricky variants: aliases, qualified
columns, quoted or upper-case names, names in strings) and expect exactly the text a
fresh check gives, or the refusal it gives; and every hostile statement refused.
"""

from __future__ import annotations

import pytest
from sql_stores import HISTORY_2020, HISTORY_2021
from test_guard_hostile import HOSTILE, _fill, as_params, expected_rule

from foretab.errors import GuardError
from foretab.sql.guard import GuardedExecutor
from foretab.sql.shapes import ShapeBook, shape_of
from foretab.sql.statement import checked_query
from foretab.sql.verdicts import VERDICTS

# {a}, {b}: two catalog tables; each statement is sent as (2021, 2020), then as (2020, 2021).
SHAPED = [
    "SELECT project_name, month, price FROM {a} WHERE project_name = ? ORDER BY month",
    "SELECT count(*) AS n FROM {a}",
    "SELECT {a}.price FROM {a} WHERE {a}.month >= ?",
    "SELECT price AS {b} FROM {a}",
    "SELECT x.price FROM main.{a} AS x",
    "SELECT price FROM {a} UNION ALL SELECT price FROM {b} ORDER BY price LIMIT 5",
    "SELECT a.month, a.price - b.price AS d FROM {a} AS a JOIN {b} AS b USING (project_name)",
    "WITH s AS (SELECT * FROM {a} WHERE month BETWEEN ? AND ?) SELECT max(price) AS m FROM s",
    "SELECT CAST(? AS TEXT) AS city, project_name FROM {a} WHERE project_name IN (?, ?)",
    # not plain renames: checked afresh, and must give what a fresh check gives
    'SELECT "{a}".price FROM {a}',
    "SELECT '{a}' AS source, price FROM {a}",
    "SELECT price FROM {A}",
    "SELECT price FROM {a} -- the {b} table\n",
    "SELECT price FROM {a} WHERE month > (SELECT min(month) FROM {a} AS {b})",
]
# Refused however the tables are named: the refusal must not depend on a learnt shape.
REFUSED = [
    ("WITH {b} AS (SELECT * FROM {a}) SELECT * FROM {b}", "cte-name"),
    ("SELECT * FROM {a}; SELECT * FROM {b}", "single-statement"),
    ("SELECT {b}(price) FROM {a}", "forbidden-function"),
]


def _sql(template: str, a: str, b: str) -> str:
    return template.format(a=a, b=b, A=a.upper())


def _fresh(guard: GuardedExecutor, sql: str) -> str:
    """The checked text a fresh check gives ``sql`` in ``guard``'s session."""
    checked = checked_query(
        sql, guard.dialect, guard._allowed_tables, guard._reserved_names, guard.max_rows + 1
    )
    return checked.text


def _shaped(guard: GuardedExecutor) -> int:
    assert guard._worker is not None
    count = guard._worker.call("shaped", 30.0)
    assert isinstance(count, int)
    return count


@pytest.fixture(scope="module")
def shaped_guard(store):
    """One guard that has run every statement of SHAPED over the 2021 table."""
    VERDICTS.clear()  # verdicts of other modules' sessions must not stand in for shapes
    with GuardedExecutor(store.db, timeout_s=2.0) as guard:
        for template in SHAPED:
            guard.prepare(_sql(template, HISTORY_2021, HISTORY_2020))
        yield guard
    VERDICTS.clear()


@pytest.mark.parametrize("template", SHAPED)
def test_a_statement_over_other_tables_gets_the_text_a_fresh_check_gives(
    store, shaped_guard, template
) -> None:
    sql = _sql(template, HISTORY_2020, HISTORY_2021)
    text = shaped_guard.prepare(sql)
    assert text == _fresh(shaped_guard, sql)
    assert HISTORY_2020 in text or HISTORY_2020.upper() in text


def test_the_plain_renames_are_served_by_their_shape(store) -> None:
    plain = SHAPED[:9]
    VERDICTS.clear()
    with GuardedExecutor(store.db, timeout_s=2.0) as guard:
        for template in plain:
            guard.prepare(_sql(template, HISTORY_2021, HISTORY_2020))
        assert _shaped(guard) == 0
        for template in plain:
            guard.prepare(_sql(template, HISTORY_2020, HISTORY_2021))
        # PostgreSQL's driver text differs from the checked text: it checks each afresh.
        assert _shaped(guard) == (len(plain) if store.backend == "duckdb" else 0)
    VERDICTS.clear()


@pytest.mark.parametrize(("template", "rule"), REFUSED)
def test_a_refused_shape_stays_refused_over_other_tables(store, shaped_guard, template, rule):
    for a, b in ((HISTORY_2021, HISTORY_2020), (HISTORY_2020, HISTORY_2021)):
        with pytest.raises(GuardError) as caught:
            shaped_guard.prepare(_sql(template, a, b))
        assert caught.value.rule == rule


@pytest.mark.parametrize(("statement", "duck_rule", "pg_rule"), as_params(HOSTILE))
def test_every_hostile_statement_is_refused_over_either_table(
    store, shaped_guard, statement, duck_rule, pg_rule
) -> None:
    expected = expected_rule(store, duck_rule, pg_rule)
    for text in {_fill(statement, store), _fill(statement, store).replace("2021", "2020")}:
        with pytest.raises(GuardError) as caught:
            shaped_guard.execute(text)
        assert caught.value.rule == expected, caught.value.message


ALLOWED = frozenset({HISTORY_2020, HISTORY_2021})


def test_a_shaped_statement_runs_and_reads_its_own_table(store, shaped_guard) -> None:
    template = SHAPED[0]
    for table in (HISTORY_2021, HISTORY_2020):
        result = shaped_guard.execute(_sql(template, table, table), ("Poly Central Park",))
        fresh = GuardedExecutor(store.db, timeout_s=2.0)
        with fresh:
            VERDICTS.clear()
            expected = fresh.execute(_sql(template, table, table), ("Poly Central Park",))
        assert (result.sql, result.rows) == (expected.sql, expected.rows)
        assert result.rows  # the demo project sells in both years


def test_only_plain_catalog_names_are_numbered() -> None:
    shape = shape_of(
        f"SELECT {HISTORY_2021}.x FROM {HISTORY_2021}, {HISTORY_2020}", "duckdb", ALLOWED
    )
    assert shape is not None and shape.names == (HISTORY_2021, HISTORY_2020)
    assert shape_of("SELECT 1", "duckdb", ALLOWED) is None  # no table: the text cache serves it
    assert shape_of(f"SELECT * FROM {HISTORY_2021.upper()}", "duckdb", ALLOWED) is None
    assert shape_of(f'SELECT * FROM "{HISTORY_2021}"', "duckdb", ALLOWED) is None
    assert shape_of(f"SELECT * FROM {HISTORY_2021} /* hi */", "duckdb", ALLOWED) is None
    unknown = "project_price_table_gulou_district_nanjing_2021"
    assert shape_of(f"SELECT * FROM {unknown}", "duckdb", ALLOWED) is None


def test_a_checked_text_that_shows_a_name_otherwise_is_not_learnt() -> None:
    book = ShapeBook("duckdb")
    sql = f"SELECT * FROM {HISTORY_2021}"
    shape = shape_of(sql, "duckdb", ALLOWED)
    assert shape is not None
    book.learn(shape, 10, f"SELECT '{HISTORY_2021}' FROM {HISTORY_2021}", 0)
    assert book.checked_text(shape, 10) is None
    book.learn(shape, 10, f"SELECT * FROM {HISTORY_2021} LIMIT 11", 0)
    other = shape_of(f"SELECT * FROM {HISTORY_2020}", "duckdb", ALLOWED)
    assert other is not None
    assert book.checked_text(other, 10) == (f"SELECT * FROM {HISTORY_2020} LIMIT 11", 0)
    assert book.checked_text(other, 11) is None  # another row cap: checked afresh
