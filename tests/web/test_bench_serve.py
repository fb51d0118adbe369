"""``foretab bench serve``: bounded load runs against real server processes (1 and N workers)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from foretab.bench.perf.serve_load import QuestionMix, compare, load_questions, run_load
from foretab.core.months import MONTH_NAMES
from foretab.errors import ForetabError
from foretab.store import open_history
from tests.web.test_api import FORECAST, QUESTIONS, UNKNOWN


def distinct_set(db: str, folder: Path, n: int) -> Path:
    """A question file in the QA builder's format: ``n`` distinct history/ZH questions."""
    with open_history(db) as store:
        projects = store.entities()
    rows = []
    for month in range(1, 13):
        for p in projects:
            rows.append(
                {
                    "question": f"What was the average price of {p.name} in {p.inner}, "
                    f"{p.outer} in {MONTH_NAMES[month - 1]} 2021?",
                    "task": "history",
                }
            )
            rows.append(
                {
                    "question": f"{p.outer}{p.inner}{p.name}2021年{month}月的均价是多少？",
                    "family": "units",
                    "language": "zh",
                }
            )
    path = folder / "test.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows[:n]))
    return path


def test_questions_are_distinct_and_too_few_are_refused(mini_duckdb: str, tmp_path: Path) -> None:
    path = distinct_set(mini_duckdb, tmp_path, 40)
    doubled = tmp_path / "again.jsonl"
    doubled.write_text(path.read_text())
    mix = load_questions(mini_duckdb, dataset=[path, doubled], seed=1)
    assert len(mix.questions) == len(set(mix.questions)) == 40  # the copies dropped
    assert mix.counts() == {"odtqa history/en": 20, "units/zh": 20}
    assert mix.questions != load_questions(mini_duckdb, dataset=[path], seed=2).questions
    with pytest.raises(ForetabError, match="40 distinct questions, 44 needed"):
        compare(
            mini_duckdb,
            mix,
            requests=20,
            concurrency=2,
            engines=1,
            future="none",
            workers=2,
            warmup=2,
        )


@pytest.mark.slow
def test_load_run_reports_statuses_latency_and_memory(mini_duckdb: str) -> None:
    questions = [FORECAST, *QUESTIONS, UNKNOWN] * 4
    report = run_load(mini_duckdb, questions, concurrency=4, engines=2, future="none", warmup=4)
    assert report.requests == len(questions) - 4
    assert report.errors == 0 and report.busy == 0
    assert report.refused == 4 and report.statuses == {"200": 16, "422": 4}
    assert 0 < report.p50_ms <= report.p95_ms <= report.max_ms
    assert report.throughput_rps > 0
    # 16 answers cost CPU (parsing, reading, forecasting): more than 0.1 ms each, and at
    # most the whole run's wall time on every core
    every_core_ms = 1000 * report.seconds * (os.cpu_count() or 1)
    assert 0.1 < report.cpu_ms_per_request <= every_core_ms / report.requests
    assert report.rss_start_mib > 10 and report.rss_end_mib > 10
    assert len(report.rss_per_worker_mib) == 1 and report.workers == 1
    # the host's speed, timed in the load generator before and after the requests
    assert all(0 < s < 60 for s in report.host_loop_s) and len(report.host_loop_s) == 2


@pytest.mark.slow
def test_one_and_two_workers_each_on_their_own_questions(mini_duckdb: str, tmp_path: Path) -> None:
    mix = load_questions(mini_duckdb, dataset=[distinct_set(mini_duckdb, tmp_path, 60)])
    result = compare(
        mini_duckdb, mix, requests=24, concurrency=4, engines=2, future="none", workers=2, warmup=4
    )
    assert [r.workers for r in result.runs] == [1, 2]
    assert result.distinct_questions == 56  # 2 × (4 + 24), none sent twice
    assert sum(result.families.values()) == 56
    for run in result.runs:
        assert run.requests == 24 and run.errors == 0 and run.busy == 0
        assert run.statuses.get("200", 0) >= 12, run.statuses
        assert len(run.rss_per_worker_mib) == run.workers
        assert all(m > 10 for m in run.rss_per_worker_mib)
    assert isinstance(QuestionMix(mix.items).counts(), dict)
