"""The real engine on the synthetic store: the oracle ablation must be perfect (issue 5)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BenchStore
from foretab.bench.qa.evaluate import RunResult, make_engine, run_benchmark, run_parallel
from foretab.dataset.items import read_items


@pytest.fixture(scope="module")
def oracle_run(bench_store: BenchStore) -> RunResult:
    items = read_items(bench_store.out / "test.jsonl") + read_items(bench_store.out / "val.jsonl")
    engine = make_engine(bench_store.db, "gh-gf", None, items)
    try:
        return run_benchmark(engine, items, ablation="gh-gf")
    finally:
        engine.close()  # type: ignore[attr-defined]


@pytest.mark.slow  # an end-to-end run of several seconds; CI runs it
def test_golden_history_and_future_answer_every_question(oracle_run: RunResult) -> None:
    data = oracle_run.to_dict()
    wrong = [
        (r.item.question, r.item.answer, r.predicted, r.error)
        for r in oracle_run.results
        if not r.correct
    ]
    assert not wrong, wrong[:5]
    assert data["reasoning"]["accuracy"] == 100.0
    assert data["forecasting"]["valid_completion_rate"] == 100.0
    assert data["history"]["exact_rate"] == 100.0
    assert data["retrieval"]["f1"] == 100.0
    assert data["future_source"] == "oracle"


@pytest.mark.slow  # an end-to-end run of several seconds; CI runs it
def test_golden_future_gives_zero_forecast_error(oracle_run: RunResult) -> None:
    assert oracle_run.to_dict()["forecasting"]["mae"] == 0.0


@pytest.mark.slow  # an end-to-end run of several seconds; CI runs it
def test_persistence_ablation_runs_and_is_worse(bench_store: BenchStore) -> None:
    items = read_items(bench_store.out / "test.jsonl")
    engine = make_engine(bench_store.db, "gh-nf", None, items)
    try:
        data = run_benchmark(engine, items, ablation="gh-nf").to_dict()
    finally:
        engine.close()  # type: ignore[attr-defined]
    assert data["errors"]["total"] == 0
    assert data["future_source"] == "none"
    assert data["forecasting"]["mae"] > 0
    assert data["reasoning"]["accuracy"] < 100.0


@pytest.mark.slow  # an end-to-end run of several seconds; CI runs it
def test_parallel_run_matches_the_sequential_one(
    bench_store: BenchStore, oracle_run: RunResult
) -> None:
    items = [r.item for r in oracle_run.results]
    parallel = run_parallel(bench_store.db, items, workers=2, ablation="gh-gf")
    assert [r.item.id for r in parallel.results] == [i.id for i in items]
    assert [r.predicted for r in parallel.results] == [r.predicted for r in oracle_run.results]
    assert parallel.to_dict()["reasoning"] == oracle_run.to_dict()["reasoning"]


def _bench_run(store: BenchStore, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    items = (store.out / "val.jsonl").read_text(encoding="utf-8").splitlines()[:16]
    dataset = tmp_path / "some.jsonl"
    dataset.write_text("\n".join(items) + "\n", encoding="utf-8")
    args = ["bench", "run", "--db", store.db, "--dataset", str(dataset), "--workers", "2", *extra]
    return subprocess.run(
        [sys.executable, "-m", "foretab", *args, "--json", str(tmp_path / "run.json")],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "120"},
        timeout=300,  # a worker that cannot start made the pool restart it without end
    )


@pytest.mark.slow  # two spawned engines and a whole CLI process; CI runs it
def test_a_parallel_run_leaves_nothing_behind_on_the_terminal(
    bench_store: BenchStore, tmp_path: Path
) -> None:
    # The pool's exit terminated its workers, and Python's resource tracker then printed
    # "There appear to be 1 leaked semaphore objects" under the figures.
    done = _bench_run(bench_store, tmp_path, "--ablation", "gh-gf")
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "run.json").read_text())["questions"] == 16
    assert "leaked" not in done.stderr and "Warning" not in done.stderr, done.stderr


@pytest.mark.slow  # two spawned workers and a whole CLI process; CI runs it
def test_workers_that_cannot_open_the_engine_end_the_run_with_the_reason(
    bench_store: BenchStore, tmp_path: Path
) -> None:
    # The synthetic store has no trained model: the workers' engines cannot load one.
    done = _bench_run(bench_store, tmp_path)
    assert done.returncode != 0
    assert "no model is stored with this store" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "leaked" not in done.stderr, done.stderr
