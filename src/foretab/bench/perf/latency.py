"""Latency of the question engine: warm ``Engine.ask`` percentiles and cold ``foretab ask``."""

from __future__ import annotations

import contextlib
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from foretab.bench.perf.host import loop_seconds
from foretab.bench.perf.proc import process_tree, run_ns
from foretab.errors import ForetabError
from foretab.store import open_history
from foretab.store.catalog import EntityEntry

#: One phrasing per question family of the built-in set; {p} project, {d} district,
#: {c} city, {q} a second project of the same district.
FAMILY_PHRASINGS: dict[str, str] = {
    "next month": "What will the average price of {p} in {d}, {c} be next month?",
    "highest in 6 months": "What is the expected highest average price of {p} in {d}, {c} over the next six months?",
    "quarter vs now": "Will the average price of {p} in {d}, {c} in the second quarter of next year be higher or lower than now?",
    "monthly list": "Give me the monthly average prices of {p} in {d}, {c} for the first three months of next year.",
    "last month": "What was the average price of {p} in {d}, {c} last month?",
    "bigger increase": "Which of {p} or {q} in {d}, {c} will see a bigger price increase next year?",
    "higher next quarter": "Which will have the higher average price next quarter, {p} or {q} in {d}, {c}?",
}
_SINGLE = tuple(v for v in FAMILY_PHRASINGS.values() if "{q}" not in v)
_PAIR = tuple(v for v in FAMILY_PHRASINGS.values() if "{q}" in v)

#: The engine's stages, as its trace names them (``Step.stage``); the rest of a warm ask's
#: time (the engine's own glue between them) is reported as ``other``.
STAGES = ("plan", "retrieve", "read", "forecast", "analyze")


@dataclass(frozen=True, slots=True)
class FamilyLatency:
    """One family's warm asks (milliseconds): where its time goes, stage by stage.

    ``stages_ms``: the mean per question of each stage's time in the answer's trace, and
    ``other`` (the rest of the ask); refused questions count in the percentiles only.
    ``share``: the family's part of all the warm asks' time. ``cpu_ms``: the mean CPU a
    question, the engine's process and its SQL guard's workers together (refused ones too).
    """

    questions: int
    p50_ms: float
    p95_ms: float
    mean_ms: float
    share: float
    stages_ms: dict[str, float]
    cpu_ms: float


@dataclass(frozen=True, slots=True)
class LatencyReport:
    """Milliseconds; ``errors`` counts questions the engine refused (they are timed too)."""

    questions: int
    errors: int
    warm_p50_ms: float
    warm_p95_ms: float
    warm_max_ms: float
    engine_start_ms: float
    cold_ask_ms: list[float]
    cold_ask_median_ms: float
    #: per question family (``measure``'s ``families``), costliest first; "all" without them
    by_family: dict[str, FamilyLatency]
    #: CPU a warm question, mean over the warm asks: the engine's process (user + system)
    #: and its SQL guard's worker processes (their threads' run time) apart. CPU moves
    #: less than wall time when other work shares the cores.
    cpu_ms_engine: float
    cpu_ms_guard: float
    #: The host's speed before and after the warm asks: CPU seconds of the 10M-addition
    #: loop (``foretab.bench.perf.host``); the same code's figures move with it.
    host_loop_s: tuple[float, float]

    @property
    def cpu_ms_per_question(self) -> float:
        return self.cpu_ms_engine + self.cpu_ms_guard


def recent_projects(
    db: str,
) -> tuple[list[EntityEntry], list[tuple[tuple[str, str], list[str]]]]:
    """The store's entities with a value in R−2..R, and its groups holding two or more."""
    with open_history(db) as store:
        projects = store.entities()
        reference = store.reference_month
    recent = [p for p in projects if reference is None or p.last_month.minus(reference) >= -2]
    by_district: dict[tuple[str, str], list[str]] = {}
    for p in recent:
        by_district.setdefault((p.outer, p.inner), []).append(p.name)
    return recent, [(k, v) for k, v in by_district.items() if len(v) >= 2]


def builtin_questions(db: str, n: int, seed: int = 0) -> list[str]:
    """``n`` questions over random projects with recent history (seeded)."""
    recent, pairs = recent_projects(db)
    rng = random.Random(seed)
    questions = []
    for i in range(n):
        if i % 3 == 2 and pairs:
            (city, district), names = rng.choice(pairs)
            a, b = rng.sample(names, 2)
            questions.append(rng.choice(_PAIR).format(p=a, q=b, d=district, c=city))
        else:
            p = rng.choice(recent)
            questions.append(rng.choice(_SINGLE).format(p=p.name, d=p.inner, c=p.outer))
    return questions


def measure(
    db: str,
    questions: Sequence[str],
    *,
    future: str = "model",
    cold_runs: int = 3,
    progress: Callable[[int, int], None] | None = None,
    families: Sequence[str] | None = None,
) -> LatencyReport:
    """Time every question on one warm engine, then ``foretab ask`` in fresh processes.

    ``families``: each question's family (as long as ``questions``), for the per-family
    figures; without it every question is of family "all".
    """
    if families is not None and len(families) != len(questions):
        raise ValueError(f"{len(families)} families for {len(questions)} questions")
    from foretab.engine import Engine

    started = time.perf_counter()
    engine = Engine.open(db, future=future)  # type: ignore[arg-type]
    if questions:  # first ask loads the forecaster: part of start-up, not of a warm ask
        with contextlib.suppress(ForetabError):
            engine.ask(questions[0])
    start_ms = (time.perf_counter() - started) * 1000
    times: list[float] = []
    stages: list[dict[str, float]] = []  # per question: ms of each stage its trace shows
    errors = 0
    # The guard's workers are this process's children (started with the engine); one
    # replaced mid-run (a statement killed at its deadline) is not counted.
    guard_workers = process_tree(os.getpid())[1:]
    engine_cpu: list[float] = []  # per question, ms
    guard_cpu: list[float] = []
    host_before = loop_seconds()
    for i, question in enumerate(questions):
        guard_before = run_ns(guard_workers)
        c0, t0 = time.process_time(), time.perf_counter()
        answer = None
        try:
            answer = engine.ask(question)
        except ForetabError:
            errors += 1
        times.append((time.perf_counter() - t0) * 1000)
        engine_cpu.append((time.process_time() - c0) * 1000)
        guard_cpu.append(max(0, run_ns(guard_workers) - guard_before) / 1e6)
        stages.append({} if answer is None else _stage_ms(answer.trace.steps))
        if progress:
            progress(i + 1, len(questions))
    host_after = loop_seconds()
    engine.close()
    cold = (
        [_cold_ask(db, questions[i % len(questions)], future) for i in range(cold_runs)]
        if questions
        else []
    )
    cpu = [e + g for e, g in zip(engine_cpu, guard_cpu, strict=True)]
    by_family = _by_family(times, stages, families or ["all"] * len(times), cpu)
    times.sort()
    return LatencyReport(
        questions=len(questions),
        errors=errors,
        warm_p50_ms=_pct(times, 50),
        warm_p95_ms=_pct(times, 95),
        warm_max_ms=times[-1] if times else 0.0,
        engine_start_ms=start_ms,
        cold_ask_ms=cold,
        cold_ask_median_ms=statistics.median(cold) if cold else 0.0,
        by_family=by_family,
        cpu_ms_engine=statistics.fmean(engine_cpu) if engine_cpu else 0.0,
        cpu_ms_guard=statistics.fmean(guard_cpu) if guard_cpu else 0.0,
        host_loop_s=(host_before, host_after),
    )


def _stage_ms(steps: Sequence[object]) -> dict[str, float]:
    """Milliseconds of each engine stage in a trace.

    Inner steps (an LLM call, a retry) are already inside their stage's time.
    """
    out = dict.fromkeys(STAGES, 0.0)
    for step in steps:
        stage = getattr(step, "stage", None)
        if stage in out:
            out[stage] += float(getattr(step, "seconds", 0.0)) * 1000
    return out


def _by_family(
    times: Sequence[float],
    stages: Sequence[dict[str, float]],
    families: Sequence[str],
    cpu: Sequence[float],
) -> dict[str, FamilyLatency]:
    """Each family's figures, the family taking the most of the total time first.

    ``cpu``: each question's CPU (ms), for the families' means.
    """
    grouped: dict[str, list[int]] = {}
    for i, family in enumerate(families):
        grouped.setdefault(family, []).append(i)
    total = sum(times) or 1.0
    out: dict[str, FamilyLatency] = {}
    for family, rows in sorted(grouped.items(), key=lambda kv: -sum(times[i] for i in kv[1])):
        mine = sorted(times[i] for i in rows)
        answered = [i for i in rows if stages[i]]
        stage_ms = {
            name: sum(stages[i][name] for i in answered) / len(answered) if answered else 0.0
            for name in STAGES
        }
        mean_answered = sum(times[i] for i in answered) / len(answered) if answered else 0.0
        stage_ms["other"] = max(0.0, mean_answered - sum(stage_ms.values()))
        out[family] = FamilyLatency(
            questions=len(rows),
            p50_ms=_pct(mine, 50),
            p95_ms=_pct(mine, 95),
            mean_ms=sum(mine) / len(mine),
            share=sum(mine) / total,
            stages_ms=stage_ms,
            cpu_ms=sum(cpu[i] for i in rows) / len(rows),
        )
    return out


def _cold_ask(db: str, question: str, future: str) -> float:
    # A fresh interpreter each time: imports, store open, index build and model load count.
    cmd = [
        sys.executable,
        "-m",
        "foretab",
        "ask",
        question,
        "--db",
        db,
        "--future",
        future,
        "--json",
    ]
    t0 = time.perf_counter()
    subprocess.run(cmd, capture_output=True, check=False)
    return (time.perf_counter() - t0) * 1000


def _pct(sorted_values: Sequence[float], pct: float) -> float:
    if not sorted_values:
        return 0.0
    k = (len(sorted_values) - 1) * pct / 100
    lo, hi = int(k), min(int(k) + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (k - lo)


def write_json(report: LatencyReport, path: Path) -> None:
    """Save the report as JSON (folders created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    from foretab.core.schema import dumps_plain

    doc = {**asdict(report), "cpu_ms_per_question": report.cpu_ms_per_question}
    path.write_text(dumps_plain(doc, indent=2) + "\n")


def sample_questions(questions: list[str], n: int, seed: int) -> list[str]:
    """``n`` questions drawn at random from all of them (all when ``n`` <= 0), file order kept.

    A built QA file is ordered by template: its first N questions are a few families only.
    """
    if n <= 0 or n >= len(questions):
        return list(questions)
    picked = sorted(random.Random(seed).sample(range(len(questions)), n))
    return [questions[i] for i in picked]
