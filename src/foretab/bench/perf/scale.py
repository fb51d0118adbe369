"""``foretab bench scale``: what each stage costs at K times the real corpus (issue 27).

For each K: generate the scale corpus (``foretab.demo.scale``), ingest it, train the
store model, then open an engine and ask every question family (``scale_stage``); each
stage runs in a fresh process, so its peak RSS is its own. Cold start is a fresh
``foretab ask`` process answering one question. Growth exponents are the slopes of
least-squares lines through (log K, log cost): 1 is linear, 0 flat.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from foretab.demo.scale import SCALE_REFERENCE
from foretab.errors import ForetabError

STAGE_MODULE = "foretab.bench.perf.scale_stage"

#: (key, label, unit) of the figures plotted and fitted.
MEASURES: tuple[tuple[str, str, str], ...] = (
    ("ingest_s", "ingest", "s"),
    ("train_s", "training", "s"),
    ("store_mb", "store on disk", "MB"),
    ("ingest_rss_mb", "ingest peak RSS", "MB"),
    ("train_rss_mb", "training peak RSS", "MB"),
    ("ask_rss_mb", "engine peak RSS", "MB"),
    ("history_tables", "catalog tables", "tables"),
    ("retrieval_ms", "retrieval (median)", "ms"),
    ("warm_p50_ms", "warm ask p50", "ms"),
    ("warm_p95_ms", "warm ask p95", "ms"),
    ("cold_start_s", "cold start", "s"),
)


class ScaleBenchError(ForetabError):
    """A stage of the scale benchmark failed."""


@dataclass(slots=True)
class ScaleRow:
    """Every figure of one K on one backend."""

    scale: int
    backend: str
    rows: int = 0
    projects: int = 0
    generate_s: float = 0.0
    ingest_s: float = 0.0
    ingest_rss_mb: float = 0.0
    train_s: float = 0.0
    train_rss_mb: float = 0.0
    store_mb: float = 0.0
    history_tables: int = 0
    retrieval_ms: float = 0.0
    engine_open_s: float = 0.0
    ask_rss_mb: float = 0.0
    warm_p50_ms: float = 0.0
    warm_p95_ms: float = 0.0
    questions: int = 0
    refused: int = 0
    cold_start_s: float = 0.0
    family_p50_ms: dict[str, float] = field(default_factory=dict)
    family_p95_ms: dict[str, float] = field(default_factory=dict)


def run_stage(stage: str, args: dict[str, Any], nice: int = 0) -> dict[str, Any]:
    """Run one stage in a fresh interpreter; its JSON figures."""
    cmd = [sys.executable, "-m", STAGE_MODULE, stage, json.dumps(args)]
    if nice:
        cmd = ["nice", "-n", str(nice), *cmd]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, env=os.environ.copy())
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-5:]
        raise ScaleBenchError(f"bench scale: the {stage} stage failed: " + " | ".join(tail))
    return json.loads(done.stdout.strip().splitlines()[-1])


def _stage(
    stage: str, args: dict[str, Any], saved: Path, resume: bool, nice: int
) -> dict[str, Any]:
    """``run_stage``, its figures kept in ``saved``; with ``resume``, ``saved``'s if there.

    A K = 100 run takes an hour: a run cut short (or a stage run alone with
    ``python -m foretab.bench.perf.scale_stage STAGE ARGS > saved``) need not redo the
    stages it finished.
    """
    if resume and saved.exists():
        return dict(json.loads(saved.read_text()))
    figures = run_stage(stage, args, nice)
    saved.write_text(json.dumps(figures) + "\n")
    return figures


def store_megabytes(db: str) -> float:
    """Bytes on disk of a DuckDB store (both sides and the artifacts), in MB.

    The store's own paths, symlinks followed: matching file names by prefix counted
    ``scale-10``'s and ``scale-100``'s stores (and the corpora) as part of ``scale-1``'s.
    """
    from foretab.store.location import StoreLocation

    location = StoreLocation.parse(db)
    files: set[Path] = set()
    for path in (Path(location.history), Path(location.future), location.artifacts_dir):
        real = path.resolve()
        if real.is_dir():
            files |= {f for f in real.rglob("*") if f.is_file()}
        elif real.is_file():
            files.add(real)
    return sum(f.stat().st_size for f in files) / 1e6


def postgres_megabytes(url: str) -> float:
    """``pg_database_size`` of the history and future databases of a store URL, in MB."""
    import psycopg

    from foretab.store.location import StoreLocation

    location = StoreLocation.parse(url)
    total = 0
    for target in (location.history, location.future):
        with psycopg.connect(target) as conn:
            row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
            total += int(row[0]) if row else 0
    return total / 1e6


def cold_start_seconds(db: str, question: str, runs: int, nice: int = 0) -> float:
    """Median wall time of a fresh ``foretab ask`` process answering ``question``."""
    cmd = [sys.executable, "-m", "foretab", "ask", question, "--db", db, "--json"]
    if nice:
        cmd = ["nice", "-n", str(nice), *cmd]
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=False)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure_scale(
    scale: int,
    work: Path,
    *,
    db: str | None = None,
    seed: int = 0,
    per_family: int = 20,
    cold_runs: int = 3,
    nice: int = 0,
    progress: Callable[[str], None] = lambda _s: None,
    resume: bool = False,
) -> ScaleRow:
    """Every figure of K = ``scale``; ``db`` a store location (default a DuckDB file in ``work``).

    Each stage's figures are kept in ``work`` (``scale-K-BACKEND.STAGE.json``); with
    ``resume`` the ingest and training stages whose figures are there are not run again
    (the store they measured must still be at ``db``).
    """
    work.mkdir(parents=True, exist_ok=True)
    corpus = work / f"scale-{scale}.parquet"
    db = db or str(work / f"scale-{scale}.duckdb")
    backend = "postgresql" if db.startswith("postgresql") else "duckdb"
    row = ScaleRow(scale=scale, backend=backend)
    made_json = work / f"scale-{scale}.generate.json"
    if not corpus.exists():
        progress(f"K={scale}: generating the corpus")
        made = run_stage("generate", {"path": str(corpus), "scale": scale, "seed": seed}, nice)
        made_json.write_text(json.dumps(made) + "\n")
        row.generate_s = made["seconds"]
    elif made_json.exists() and made_json.stat().st_size:
        row.generate_s = json.loads(made_json.read_text())["seconds"]
    saved = work / f"scale-{scale}-{backend}"
    progress(f"K={scale} {backend}: ingesting")
    ingest_args = {"path": str(corpus), "db": db, "reference": SCALE_REFERENCE.iso}
    ingested = _stage("ingest", ingest_args, Path(f"{saved}.ingest.json"), resume, nice)
    row.ingest_s, row.ingest_rss_mb = ingested["seconds"], ingested["peak_rss_mb"]
    row.history_tables, row.rows = ingested["history_tables"], ingested["history_rows"]
    progress(f"K={scale} {backend}: training")
    train_args = {"db": db, "seed": seed}
    trained = _stage("train", train_args, Path(f"{saved}.train.json"), resume, nice)
    row.train_s, row.train_rss_mb, row.projects = (
        trained["seconds"],
        trained["peak_rss_mb"],
        trained["series"],
    )
    row.store_mb = postgres_megabytes(db) if backend == "postgresql" else store_megabytes(db)
    progress(f"K={scale} {backend}: asking")
    asked = run_stage("ask", {"db": db, "per_family": per_family, "seed": seed}, nice)
    row.ask_rss_mb = asked["peak_rss_mb"]
    for key in (
        "engine_open_s",
        "questions",
        "refused",
        "warm_p50_ms",
        "warm_p95_ms",
        "family_p50_ms",
        "family_p95_ms",
    ):
        setattr(row, key, asked[key])
    row.retrieval_ms = asked["retrieval_median_ms"]
    from foretab.bench.perf.scale_stage import family_questions

    question = family_questions(db, 1, seed)[0][1]
    progress(f"K={scale} {backend}: cold start")
    row.cold_start_s = cold_start_seconds(db, question, cold_runs, nice)
    return row


def growth_exponents(rows: Sequence[ScaleRow]) -> dict[str, dict[str, float]]:
    """Per backend and measure: the slope of log(cost) on log(K) (needs two or more K)."""
    out: dict[str, dict[str, float]] = {}
    for backend in sorted({r.backend for r in rows}):
        mine = sorted((r for r in rows if r.backend == backend), key=lambda r: r.scale)
        if len({r.scale for r in mine}) < 2:
            continue
        ks = np.log([r.scale for r in mine])
        out[backend] = {}
        for key, _, _ in MEASURES:
            values = np.array([float(getattr(r, key)) for r in mine])
            if np.all(values > 0):
                out[backend][key] = round(float(np.polyfit(ks, np.log(values), 1)[0]), 2)
    return out


def plot_scale(rows: Sequence[ScaleRow], path: Path) -> Path:
    """Log-log lines of every measure against K, one panel per unit."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    measured = [m for m in MEASURES if any(float(getattr(r, m[0])) > 0 for r in rows)]
    units = list(dict.fromkeys(unit for _, _, unit in measured))
    fig, axes = plt.subplots(1, max(1, len(units)), figsize=(4.2 * max(1, len(units)), 3.8))
    for ax, unit in zip(np.atleast_1d(axes), units, strict=True):
        for key, label, u in measured:
            if u != unit:
                continue
            for backend in sorted({r.backend for r in rows}):
                mine = sorted((r for r in rows if r.backend == backend), key=lambda r: r.scale)
                points = [(r.scale, float(getattr(r, key))) for r in mine]
                points = [(k, v) for k, v in points if v > 0]
                if points:
                    style = "-o" if backend == "duckdb" else "--s"
                    ax.plot(*zip(*points, strict=True), style, label=f"{label} ({backend})")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("K (times the real corpus)")
        ax.set_ylabel(unit)
        ax.legend(fontsize=6)
        ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_rows(rows: Sequence[ScaleRow], path: Path) -> None:
    """The rows and exponents as JSON."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"rows": [asdict(r) for r in rows], "exponents": growth_exponents(rows)}
    path.write_text(json.dumps(payload, indent=2) + "\n")


def read_rows(path: Path) -> list[ScaleRow]:
    """Rows written by :func:`write_rows` (to add a K to an earlier run)."""
    return [ScaleRow(**r) for r in json.loads(path.read_text())["rows"]]


def markdown_table(rows: Sequence[ScaleRow]) -> str:
    """One line per (K, backend), then the growth exponents."""
    head = ["K", "backend", "rows", *(f"{label} ({unit})" for _, label, unit in MEASURES)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in sorted(rows, key=lambda r: (r.backend, r.scale)):
        cells = [str(r.scale), r.backend, f"{r.rows:,}"]
        for key, _, _ in MEASURES:
            value = float(getattr(r, key))
            cells.append(f"{value:,.0f}" if value >= 100 else f"{value:.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    exponents = growth_exponents(rows)
    for backend, fitted in exponents.items():
        cells = ["exponent", backend, ""]
        cells += [f"{fitted[k]:.2f}" if k in fitted else "" for k, _, _ in MEASURES]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
