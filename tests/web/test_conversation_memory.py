"""The API's conversation state cannot grow without bound (docs/conversations.md).

10,000 turns over 1,000 conversations through ``POST /api/ask``, 100 conversations at a
time (each of 10 turns: a question and 9 follow-ups, every one answered): the server keeps
at most ``max_conversations`` and its memory stays flat once the first batch has warmed it.

The turns run in a Python process of their own: inside the test process the resident size
also holds what a thousand earlier tests left behind and pytest's log capture, which keeps
every record a chatty library (bm25s logs at DEBUG) emits. A CI run once saw 1,483 MB grow
by 18 MB there while the server's own figure stays flat.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

FIRST = "What was the price of Bund Garden in Huangpu, Shanghai in December 2021?"
FOLLOW_UPS = (
    "and in November 2021?", "in units?", "what about Huamu Terrace in Pudong?",
    "and in 2020?", "the highest instead", "and in 2019?", "what about Poly Garden?", "2",
    "and in June 2021?",
)  # fmt: skip
MAX_CONVERSATIONS = 200

# The child's program: it prints one JSON line, {"statuses", "rss", "most_kept"}.
_TURNS = textwrap.dedent(
    """
    import gc, json, sys
    from pathlib import Path
    from fastapi.testclient import TestClient
    from foretab.converse.store import ConversationLimits
    from foretab.engine import Engine
    from foretab.web import AppSettings, EnginePool, create_app

    db, first, follow_ups, most = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])

    def rss_mb():
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024

    pool = EnginePool(
        lambda mode, warm: Engine.open(db if warm is None else warm.context, future=mode),
        size=2,
        default="none",
    )
    limits = ConversationLimits(max_conversations=most, max_turns=10)
    settings = AppSettings(allowed_hosts=("testserver",), conversation_limits=limits)
    statuses, rss, most_kept = {}, [], 0
    try:
        with TestClient(create_app(pool, settings)) as client:
            store = client.app.state.conversations
            for _batch in range(10):
                ids = []
                for _ in range(100):
                    reply = client.post("/api/ask", json={"question": first})
                    statuses[reply.status_code] = statuses.get(reply.status_code, 0) + 1
                    ids.append(reply.json()["conversation_id"])
                for follow_up in follow_ups:
                    for cid in ids:
                        reply = client.post(
                            "/api/ask", json={"question": follow_up, "conversation_id": cid}
                        )
                        statuses[reply.status_code] = statuses.get(reply.status_code, 0) + 1
                gc.collect()
                rss.append(rss_mb())
                most_kept = max(most_kept, store.count())
    finally:
        pool.close()
    print(json.dumps({"statuses": statuses, "rss": rss, "most_kept": most_kept}))
    """
)


@pytest.mark.slow  # 10,000 requests: ~2-4 minutes
def test_memory_stays_flat_over_10000_turns(mini_duckdb: str) -> None:
    if sys.platform != "linux":
        pytest.skip("needs /proc/self/status (Linux) to read the process's memory")
    argv = [sys.executable, "-c", _TURNS, mini_duckdb, FIRST, json.dumps(FOLLOW_UPS)]
    done = subprocess.run([*argv, str(MAX_CONVERSATIONS)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    rss = result["rss"]
    print(f"RSS (MB) after each batch of 1,000 turns: {[round(r, 1) for r in rss]}")
    assert result["statuses"] == {"200": 10_000}, result["statuses"]
    assert result["most_kept"] <= MAX_CONVERSATIONS
    # after the first batch (caches, indexes, the SQLite pages warm), nothing accumulates;
    # measured in its own process: 208.1 -> 208.4 MB (2026-12-05)
    assert max(rss[1:]) - rss[1] < 5, rss
