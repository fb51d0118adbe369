"""The guard worker's one watchdog thread, shared by the sessions a pooled worker serves."""

from __future__ import annotations

import threading
import time

from foretab.sql.worker import WATCHDOG_STACK_BYTES, _Watchdog


def test_one_watchdog_interrupts_each_sessions_statement_at_its_deadline() -> None:
    before = threading.active_count()
    watchdog = _Watchdog()
    assert threading.active_count() == before + 1  # started once, with the worker
    assert threading.stack_size() != WATCHDOG_STACK_BYTES  # the small stack was its own
    fired: list[str] = []
    for session in ("first", "second"):
        watchdog.arm(time.perf_counter() + 0.05, lambda s=session: fired.append(s))
        deadline = time.perf_counter() + 5
        while not watchdog.fired and time.perf_counter() < deadline:
            time.sleep(0.01)
        assert watchdog.fired
    assert fired == ["first", "second"]  # each statement's own interrupt, no new thread
    assert threading.active_count() == before + 1


def test_a_disarmed_watchdog_does_not_fire() -> None:
    watchdog = _Watchdog()
    fired: list[bool] = []
    watchdog.arm(time.perf_counter() + 0.05, lambda: fired.append(True))
    watchdog.disarm()
    time.sleep(0.15)
    assert not fired and not watchdog.fired
