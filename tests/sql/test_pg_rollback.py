"""A PostgreSQL session always ends a statement's transaction, even when its ROLLBACK fails.

The guard worker's watchdog cancels a statement at its limit from another thread, at about
the moment the server's own ``statement_timeout`` ends it; the cancel can then land on the
ROLLBACK that follows and fail it. CI saw the next statement refused with "current
transaction is aborted" (tests/sql/test_guard_hostile.py, the recursive-CTE runaway, on a
slow host). The cancel's timing cannot be forced on a real server, so here the driver's
first ROLLBACK fails the way a cancel fails it, on a real session in a real aborted
transaction.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from foretab.backend.postgres import PostgresBackend, PostgresConnection
from foretab.errors import QueryError

pytestmark = pytest.mark.postgres


class _CancelledRollbacks:
    """A psycopg connection whose first ``failures`` ROLLBACKs fail as a cancel fails them."""

    def __init__(self, driver: psycopg.Connection, failures: int) -> None:
        self._driver = driver
        self.failures = failures

    def rollback(self) -> None:
        if self.failures > 0:
            self.failures -= 1
            raise psycopg.errors.QueryCanceled("canceling statement due to user request")
        self._driver.rollback()

    def __getattr__(self, name: str) -> object:
        return getattr(self._driver, name)


@pytest.fixture
def session(mini_postgresql: str) -> Iterator[PostgresConnection]:
    conn = PostgresBackend().connect(mini_postgresql, purpose="read")
    yield conn
    conn.close()


def test_a_failed_rollback_is_retried_and_the_session_stays_usable(session) -> None:
    real = session.driver
    session.driver = _CancelledRollbacks(real, failures=1)
    with pytest.raises(QueryError, match="division by zero"):
        session.fetch_text("SELECT 1 / 0", [])
    assert session.driver.failures == 0  # the failing ROLLBACK did happen
    assert real.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    assert session.fetch_text("SELECT 1", []).rows == ((1,),)


def test_a_session_that_cannot_end_its_transaction_is_closed_not_reused(session) -> None:
    real = session.driver
    session.driver = _CancelledRollbacks(real, failures=10)
    with pytest.raises(QueryError, match="division by zero"):
        session.fetch_text("SELECT 1 / 0", [])
    assert real.closed
    with pytest.raises(QueryError, match="the connection is closed"):
        session.fetch_text("SELECT 1", [])
