"""The real engine on the synthetic store: the oracle ablation must be perfect (issue 5)."""

from __future__ import annotations

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
