"""The API's conversation state cannot grow without bound (docs/conversations.md).

10,000 turns over 1,000 conversations through ``POST /api/ask``, 100 conversations at a
time (each of 10 turns: a question and 9 follow-ups, every one answered): the server keeps
at most ``max_conversations`` and its memory stays flat once the first batch has warmed it.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from foretab.converse.store import ConversationLimits, ConversationStore
from foretab.engine import Engine
from foretab.web import AppSettings, EnginePool, create_app

FIRST = "What was the price of Bund Garden in Huangpu, Shanghai in December 2021?"
FOLLOW_UPS = (
    "and in November 2021?", "in units?", "what about Huamu Terrace in Pudong?",
    "and in 2020?", "the highest instead", "and in 2019?", "what about Poly Garden?", "2",
    "and in June 2021?",
)  # fmt: skip


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    pytest.skip("needs /proc/self/status (Linux) to read the process's memory")


@pytest.mark.slow  # 10,000 requests: ~2-4 minutes
def test_memory_stays_flat_over_10000_turns(mini_duckdb: str) -> None:
    pool = EnginePool(
        lambda mode, warm: Engine.open(mini_duckdb if warm is None else warm.context, future=mode),
        size=2,
        default="none",
    )
    limits = ConversationLimits(max_conversations=200, max_turns=10)
    settings = AppSettings(allowed_hosts=("testserver",), conversation_limits=limits)
    statuses: dict[int, int] = {}
    try:
        with TestClient(create_app(pool, settings)) as client:
            store: ConversationStore = client.app.state.conversations  # type: ignore[attr-defined]
            rss: list[float] = []
            for _batch in range(10):
                ids = []
                for _ in range(100):
                    reply = client.post("/api/ask", json={"question": FIRST})
                    statuses[reply.status_code] = statuses.get(reply.status_code, 0) + 1
                    ids.append(reply.json()["conversation_id"])
                for follow_up in FOLLOW_UPS:
                    for cid in ids:
                        body = {"question": follow_up, "conversation_id": cid}
                        reply = client.post("/api/ask", json=body)
                        statuses[reply.status_code] = statuses.get(reply.status_code, 0) + 1
                gc.collect()
                rss.append(_rss_mb())
                assert store.count() <= limits.max_conversations
    finally:
        pool.close()
    print(f"RSS (MB) after each batch of 1,000 turns: {[round(r, 1) for r in rss]}")
    assert statuses == {200: 10_000}, statuses
    # after the first batch (caches, indexes, the SQLite pages warm), nothing accumulates
    assert max(rss[1:]) - rss[1] < 5, rss  # measured: 299.0 → 299.2 MB (2026-12-03)
