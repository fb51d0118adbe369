"""Latency of the question engine: warm ``Engine.ask`` percentiles and cold ``foretab ask``."""

from __future__ import annotations

import contextlib
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

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
) -> LatencyReport:
    """Time every question on one warm engine, then ``foretab ask`` in fresh processes."""
    from foretab.engine import Engine

    started = time.perf_counter()
    engine = Engine.open(db, future=future)  # type: ignore[arg-type]
    if questions:  # first ask loads the forecaster: part of start-up, not of a warm ask
        with contextlib.suppress(ForetabError):
            engine.ask(questions[0])
    start_ms = (time.perf_counter() - started) * 1000
    times: list[float] = []
    errors = 0
    for i, question in enumerate(questions):
        t0 = time.perf_counter()
        try:
            engine.ask(question)
        except ForetabError:
            errors += 1
        times.append((time.perf_counter() - t0) * 1000)
        if progress:
            progress(i + 1, len(questions))
    engine.close()
    cold = (
        [_cold_ask(db, questions[i % len(questions)], future) for i in range(cold_runs)]
        if questions
        else []
    )
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
    )


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

    path.write_text(dumps_plain(asdict(report), indent=2) + "\n")


def sample_questions(questions: list[str], n: int, seed: int) -> list[str]:
    """``n`` questions drawn at random from all of them (all when ``n`` <= 0), file order kept.

    A built QA file is ordered by template: its first N questions are a few families only.
    """
    if n <= 0 or n >= len(questions):
        return list(questions)
    picked = sorted(random.Random(seed).sample(range(len(questions)), n))
    return [questions[i] for i in picked]
