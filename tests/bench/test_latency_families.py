"""`foretab bench latency`'s per-family figures: where each family's time goes, by stage."""

from __future__ import annotations

import os

import pytest

from foretab.bench.perf.latency import STAGES, _by_family, _stage_ms, measure
from foretab.core.trace import AnalyzeStep, PlanStep, RetrieveStep


def test_a_trace_gives_each_stage_its_milliseconds() -> None:
    steps = [
        PlanStep("rules", 0.002),
        RetrieveStep("catalog", 0.0005, ()),
        AnalyzeStep("rules", 0.001, None),
    ]
    ms = _stage_ms(steps)
    assert set(ms) == set(STAGES)
    assert ms["plan"] == pytest.approx(2.0)
    assert ms["retrieve"] == pytest.approx(0.5)
    assert ms["analyze"] == pytest.approx(1.0)
    assert ms["read"] == ms["forecast"] == 0.0


def test_families_are_grouped_costliest_first_with_their_stage_means() -> None:
    times = [10.0, 30.0, 2.0, 4.0]
    stages = [
        {"plan": 1.0, "retrieve": 0.0, "read": 5.0, "forecast": 0.0, "analyze": 3.0},
        {"plan": 3.0, "retrieve": 0.0, "read": 7.0, "forecast": 0.0, "analyze": 19.0},
        {"plan": 1.0, "retrieve": 0.0, "read": 0.5, "forecast": 0.0, "analyze": 0.0},
        {},  # refused: timed, no trace
    ]
    cpu = [9.0, 29.0, 2.0, 1.0]
    out = _by_family(times, stages, ["scope", "scope", "history", "history"], cpu)
    assert list(out) == ["scope", "history"]  # 40 ms before 6 ms
    scope, history = out["scope"], out["history"]
    assert scope.questions == 2 and history.questions == 2
    assert scope.share == pytest.approx(40 / 46) and history.share == pytest.approx(6 / 46)
    assert scope.mean_ms == pytest.approx(20.0)
    assert scope.cpu_ms == pytest.approx(19.0) and history.cpu_ms == pytest.approx(1.5)
    assert scope.stages_ms["analyze"] == pytest.approx(11.0)
    assert scope.stages_ms["other"] == pytest.approx(20.0 - (2.0 + 6.0 + 11.0))
    # the refused question counts in the percentiles, not in the stage means
    assert history.p50_ms == pytest.approx(3.0)
    assert history.stages_ms["plan"] == pytest.approx(1.0)
    assert history.stages_ms["other"] == pytest.approx(2.0 - 1.5)


def test_one_family_per_question_or_a_clear_error() -> None:
    with pytest.raises(ValueError, match="2 families for 3 questions"):
        measure("unused.duckdb", ["a", "b", "c"], families=["x", "y"], cold_runs=0)


def test_process_cpu_counts_children_and_the_time_they_spent() -> None:
    import subprocess
    import sys
    import time

    from foretab.bench.perf.proc import cpu_seconds, process_tree, run_ns

    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.15: pass\n"
    child = subprocess.Popen([sys.executable, "-c", burn + "time.sleep(30)"])
    try:
        deadline = time.monotonic() + 20
        while cpu_seconds([child.pid]) < 0.12 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert child.pid in process_tree(os.getpid())
        assert 0.12 <= cpu_seconds([child.pid]) < 5
        assert 0.12e9 <= run_ns([child.pid]) < 5e9  # the same time, in nanoseconds
        assert cpu_seconds(process_tree(os.getpid())) >= cpu_seconds([child.pid])
    finally:
        child.kill()
        child.wait()
    assert cpu_seconds([child.pid]) == 0.0 and run_ns([child.pid]) == 0  # gone


def test_the_host_loop_takes_cpu_time_in_proportion_to_its_additions() -> None:
    from foretab.bench.perf.host import LOOP_ADDITIONS, loop_seconds

    assert LOOP_ADDITIONS == 10_000_000  # the docs' "10M-addition loop"
    short, long = loop_seconds(100_000), loop_seconds(1_000_000)
    # ten times the additions: clearly more CPU (not exactly ten times on a shared host)
    assert short > 0 and 3 * short < long < 60


@pytest.mark.slow
def test_latency_counts_the_engine_and_guard_worker_cpu(mini_duckdb: str) -> None:
    from foretab.bench.perf.latency import builtin_questions

    report = measure(mini_duckdb, builtin_questions(mini_duckdb, 60), cold_runs=0)
    assert report.errors < report.questions
    # Every question reads through the guard's worker process: its CPU is counted apart.
    assert report.cpu_ms_engine > 0 and report.cpu_ms_guard > 0
    (family,) = report.by_family.values()
    # Both processes work in turn (the engine waits for its read): no more than the wall.
    assert report.cpu_ms_per_question < 1.5 * family.mean_ms + 1
    assert family.cpu_ms == pytest.approx(report.cpu_ms_per_question)
    assert all(0 < s < 60 for s in report.host_loop_s)  # the host's speed, before and after
