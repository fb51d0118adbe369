"""``foretab bench serve``: a small bounded load run against a real server process."""

from __future__ import annotations

import pytest

from foretab.bench.perf.serve_load import run_load
from tests.web.test_api import FORECAST, QUESTIONS, UNKNOWN


@pytest.mark.slow
def test_load_run_reports_statuses_latency_and_memory(mini_duckdb: str) -> None:
    questions = [FORECAST, *QUESTIONS, UNKNOWN] * 4
    report = run_load(mini_duckdb, questions, concurrency=4, engines=2, future="none", warmup=4)
    assert report.requests == len(questions)
    assert report.errors == 0
    assert report.refused == 4 and report.statuses == {"200": 20, "422": 4}
    assert 0 < report.p50_ms <= report.p95_ms <= report.max_ms
    assert report.throughput_rps > 0
    assert report.rss_start_mib > 10 and report.rss_end_mib > 10
