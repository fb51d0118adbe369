"""``rows_to_history``: a history query's rows typed as one series per plan entity.

Each row goes to the plan entity its place and name say; a row of no plan entity is an
error (a scope read skips it), a name that could be two entities is an error, a NULL
value is dropped and counted, and units are kept beside the values.
"""

from __future__ import annotations

import datetime as dt

import pytest

from foretab.core.months import Month
from foretab.core.plan import EntityRef, Metric
from foretab.errors import QueryError
from foretab.read.reader import rows_to_history
from foretab.sql.result import QueryResult

PLACED = ("city", "district", "project_name", "month", "price", "units_sold")
A = EntityRef("Nanjing", "Jiangning", "Poly Central Park")
B = EntityRef("Wuhan", "Jiangning", "Poly Central Park")  # same name and district name
JAN, FEB = dt.date(2021, 1, 1), dt.date(2021, 2, 1)


def _result(rows: list[tuple[object, ...]], columns: tuple[str, ...] = PLACED) -> QueryResult:
    return QueryResult(columns, tuple(rows), truncated=False, elapsed_s=0.0)


def test_rows_go_to_the_entity_of_their_place() -> None:
    rows = [
        ("Nanjing", "Jiangning", A.name, JAN, 30_000.0, 12),
        ("Wuhan", "Jiangning", B.name, JAN, 15_000.0, 40),
        ("Nanjing", "Jiangning", A.name, FEB, 31_000.0, None),
        ("Wuhan", "Jiangning", B.name, FEB, None, 7),
    ]
    history = rows_to_history(_result(rows), [A, B])
    assert dict(history[A]) == {Month(2021, 1): 30_000.0, Month(2021, 2): 31_000.0}
    assert dict(history[B]) == {Month(2021, 1): 15_000.0}
    assert history.dropped_rows == 1  # B's NULL price in February
    # units are kept even where the price is NULL; NULL units are not
    assert dict(history.units[A]) == {Month(2021, 1): 12.0}
    assert dict(history.units[B]) == {Month(2021, 1): 40.0, Month(2021, 2): 7.0}
    units = rows_to_history(_result(rows), [A, B], Metric.UNITS)
    assert dict(units[A]) == {Month(2021, 1): 12.0}
    assert units.dropped_rows == 1  # A's NULL units in February


def test_an_entity_without_rows_has_an_empty_series() -> None:
    rows = [("Nanjing", "Jiangning", A.name, JAN, 30_000.0, 12)]
    history = rows_to_history(_result(rows), [A, B])
    assert list(history) == [A, B] and dict(history[B]) == {}


def test_a_row_of_no_plan_entity_is_an_error_and_a_scope_read_skips_it() -> None:
    rows = [
        ("Nanjing", "Jiangning", A.name, JAN, 30_000.0, 12),
        ("Nanjing", "Gulou", A.name, JAN, 50_000.0, 3),  # same name, other district
    ]
    with pytest.raises(QueryError, match="does not name"):
        rows_to_history(_result(rows), [A])
    history = rows_to_history(_result(rows), [A], scope=True)
    assert dict(history[A]) == {Month(2021, 1): 30_000.0} and history.dropped_rows == 0


def test_a_name_that_could_be_two_entities_needs_the_place_columns() -> None:
    columns = ("project_name", "month", "price")
    with pytest.raises(QueryError, match="several entities of that name"):
        rows_to_history(_result([(A.name, JAN, 30_000.0)], columns), [A, B])
    history = rows_to_history(_result([(A.name, JAN, 30_000.0)], columns), [A])
    assert dict(history[A]) == {Month(2021, 1): 30_000.0}
    with pytest.raises(QueryError, match="does not name"):
        rows_to_history(_result([("Elsewhere", JAN, 1.0)], columns), [A])


def test_non_finite_values_are_dropped_and_counted() -> None:
    rows = [
        ("Nanjing", "Jiangning", A.name, JAN, float("nan"), 1),
        ("Nanjing", "Jiangning", A.name, FEB, float("inf"), 1),
    ]
    history = rows_to_history(_result(rows), [A])
    assert dict(history[A]) == {} and history.dropped_rows == 2


def test_missing_columns_are_named() -> None:
    with pytest.raises(QueryError, match="price"):
        rows_to_history(_result([], ("city", "district", "project_name", "month")), [A])
