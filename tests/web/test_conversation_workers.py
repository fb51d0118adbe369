"""A conversation over ``foretab serve --workers 2``: any worker continues any conversation."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.web.server import serve_process


@pytest.mark.slow  # two server processes: ~10 s
def test_every_follow_up_is_answered_whichever_worker_takes_it(
    mini_duckdb: str, tmp_path: Path
) -> None:
    args = ("--workers", "2", "--engines", "1", "--future", "none")
    with serve_process(mini_duckdb, *args, log_path=tmp_path / "serve.log") as (url, _process):
        reply = httpx.post(
            url + "/api/ask",
            json={
                "question": "What was the price of Bund Garden in Huangpu, Shanghai in October 2021?"
            },
            timeout=30,
        )
        cid, first_worker = (
            reply.json()["conversation_id"],
            reply.headers.get("x-foretab-worker", "?"),
        )

        def follow_up(_: int) -> tuple[int, object, str]:
            # a new connection each: the kernel hands it to whichever worker accepts first
            reply = httpx.post(
                url + "/api/ask",
                json={"question": "and in November 2021?", "conversation_id": cid},
                timeout=60,
            )
            return (
                reply.status_code,
                reply.json().get("answer"),
                reply.headers.get("x-foretab-worker", "?"),
            )

        answered_by: set[str] = {first_worker}
        results = []
        with ThreadPoolExecutor(8) as pool:
            for _ in range(20):  # until both workers have taken a follow-up
                batch = list(pool.map(follow_up, range(8)))
                results.extend(batch)
                answered_by |= {worker for _, _, worker in batch}
                if answered_by == {"0", "1"}:
                    break
        assert {(status, str(answer)) for status, answer, _ in results} == {(200, "[[59197.32]]")}
        assert answered_by == {"0", "1"}, "the follow-ups never reached the second worker"
