"""``ConversationStore``'s limits: which conversations go, and that applying them scans nothing.

Every ``POST /api/ask`` saves a turn, so a save must not rank all of an owner's
conversations (it did: ~1.2 ms a request with 1,000 kept); the plans are checked rather
than timed.
"""

from __future__ import annotations

import sqlite3

from foretab.converse.store import ConversationLimits, ConversationStore


def _store(most: int, now: list[float], max_age_s: float = 3600.0) -> ConversationStore:
    limits = ConversationLimits(max_conversations=most, max_turns=5, max_age_s=max_age_s)
    return ConversationStore(limits=limits, clock=lambda: now[0])


def test_the_least_recently_used_go_first_and_a_follow_up_counts_as_use() -> None:
    now = [0.0]
    store = _store(3, now)
    for name in "abc":
        now[0] += 1
        store.save("", name, [name])
    now[0] += 1
    store.save("", "a", ["a", "a again"])  # "a" is now the most recent
    for name in "de":
        now[0] += 1
        store.save("", name, [name])
    assert store.load("", "b") is None and store.load("", "c") is None
    assert store.load("", "a") == ["a", "a again"]
    assert store.load("", "d") == ["d"] and store.load("", "e") == ["e"]
    assert store.count("") == 3


def test_ties_in_last_use_drop_the_earliest_saved() -> None:
    now = [5.0]
    store = _store(2, now)
    for name in "wxyz":
        store.save("", name, [name])
    assert [store.load("", n) is not None for n in "wxyz"] == [False, False, True, True]


def test_each_owner_has_its_own_bound() -> None:
    now = [0.0]
    store = _store(2, now)
    for i in range(5):
        now[0] += 1
        store.save("alice", f"a{i}", ["q"])
        store.save("bob", f"b{i}", ["q"])
    assert store.count("alice") == 2 and store.count("bob") == 2 and store.count() == 4


def test_a_save_sweeps_every_owners_expired_conversations() -> None:
    now = [0.0]
    store = _store(10, now, max_age_s=100)
    store.save("alice", "old", ["q"])
    store.save("bob", "old", ["q"])
    now[0] = 50.0
    store.save("bob", "mid", ["q"])
    now[0] = 120.0
    store.save("carol", "new", ["q"])
    assert store.count() == 2 and store.count("alice") == 0 and store.count("bob") == 1


def test_saving_reads_through_indexes_only() -> None:
    now = [0.0]
    store = _store(3, now, max_age_s=100)
    statements: list[str] = []
    db: sqlite3.Connection = store._db
    db.set_trace_callback(statements.append)
    for i in range(6):
        now[0] += 1
        store.save("", f"c{i}", ["q"])
    store.save("", "c5", ["q", "again"])
    db.set_trace_callback(None)
    plans = []
    for statement in {s for s in statements if s.split()[0] in ("SELECT", "DELETE", "INSERT")}:
        # the traced text has its values filled in: explain it as it ran
        plans += [row[3] for row in db.execute(f"EXPLAIN QUERY PLAN {statement}")]
    full_scans = [p for p in plans if p.startswith("SCAN conversation") and "INDEX" not in p]
    assert plans and not full_scans, plans
