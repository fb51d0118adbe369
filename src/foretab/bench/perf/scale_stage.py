"""One stage of ``foretab bench scale``, run in its own process (``python -m`` this module).

A fresh process per stage makes its peak resident memory (``ru_maxrss``) that stage's
alone. Prints one JSON object: the stage's seconds, peak RSS in MB and its own figures.
"""

from __future__ import annotations

import contextlib
import json
import random
import resource
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from foretab.bench.perf.latency import FAMILY_PHRASINGS, recent_projects
from foretab.errors import ForetabError


def _generate(args: dict[str, Any]) -> dict[str, Any]:
    from foretab.demo.scale import write_scale_corpus

    corpus = write_scale_corpus(args["path"], int(args["scale"]), int(args["seed"]))
    return {"rows": corpus.rows, "projects": corpus.projects, "districts": corpus.districts}


def _ingest(args: dict[str, Any]) -> dict[str, Any]:
    from foretab.core.months import Month
    from foretab.store.ingest import ingest_path
    from foretab.store.validate import MAX_INPUT_BYTES

    # The corpus was generated here, not handed in: past K = 39 it is over the 256 MiB
    # a user's file may decode to (K = 100: 651 MiB), so the limit is its own size.
    limit = max(MAX_INPUT_BYTES, _decoded_bytes(args["path"]))
    summary = ingest_path(
        args["path"], args["db"], Month.parse(args["reference"]), max_parquet_bytes=limit
    )
    return {
        "history_tables": summary.history_tables,
        "future_tables": summary.future_tables,
        "history_rows": summary.history_rows,
    }


def _decoded_bytes(path: str) -> int:
    """A bound on a generated Parquet file's decoded size, or its footer's figure.

    64 bytes a cell: 8 for the value or string offset, the rest the longest names.
    """
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    size = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    return max(size, 64 * meta.num_rows * meta.num_columns)


def _train(args: dict[str, Any]) -> dict[str, Any]:
    from foretab.forecast.store import train_store_model

    fitted = train_store_model(args["db"], seed=int(args["seed"]))
    return {"series": fitted.n_series}


def family_questions(db: str, per_family: int, seed: int) -> list[tuple[str, str]]:
    """``per_family`` questions of each family over random projects with recent sales."""
    recent, pairs = recent_projects(db)
    rng = random.Random(seed)
    out = []
    for family, phrasing in FAMILY_PHRASINGS.items():
        for _ in range(per_family):
            if "{q}" in phrasing:
                (city, district), names = rng.choice(pairs)
                a, b = rng.sample(names, 2)
                out.append((family, phrasing.format(p=a, q=b, d=district, c=city)))
            else:
                p = rng.choice(recent)
                out.append((family, phrasing.format(p=p.name, d=p.inner, c=p.outer)))
    return out


def _pct(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * pct / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def _ask(args: dict[str, Any]) -> dict[str, Any]:
    """Engine start, then every question twice: a warm-up pass and the timed pass."""
    from foretab.core.trace import RetrieveStep
    from foretab.engine import Engine

    questions = family_questions(args["db"], int(args["per_family"]), int(args["seed"]))
    started = time.perf_counter()
    engine = Engine.open(args["db"])
    open_s = time.perf_counter() - started
    for _, question in questions:  # loads the model, fills caches: what "warm" means
        with contextlib.suppress(ForetabError):
            engine.ask(question)
    times: dict[str, list[float]] = {f: [] for f in FAMILY_PHRASINGS}
    retrieval: list[float] = []
    refused = 0
    for family, question in questions:
        t0 = time.perf_counter()
        try:
            answer = engine.ask(question)
        except ForetabError:
            refused += 1
            times[family].append((time.perf_counter() - t0) * 1000)
            continue
        times[family].append((time.perf_counter() - t0) * 1000)
        retrieval += [s.seconds * 1000 for s in answer.trace.steps if isinstance(s, RetrieveStep)]
    engine.close()
    every = [t for v in times.values() for t in v]
    return {
        "engine_open_s": open_s,
        "questions": len(questions),
        "refused": refused,
        "warm_p50_ms": _pct(every, 50),
        "warm_p95_ms": _pct(every, 95),
        "family_p50_ms": {f: _pct(v, 50) for f, v in times.items() if v},
        "family_p95_ms": {f: _pct(v, 95) for f, v in times.items() if v},
        "retrieval_median_ms": statistics.median(retrieval) if retrieval else 0.0,
    }


STAGES: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "generate": _generate,
    "ingest": _ingest,
    "train": _train,
    "ask": _ask,
}


def main(argv: list[str]) -> None:
    """``STAGE JSON-ARGS``: run the stage, print its figures as one JSON line."""
    stage, args = argv[0], json.loads(argv[1])
    started = time.perf_counter()
    figures = STAGES[stage](args)
    seconds = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB
    print(json.dumps({"seconds": seconds, "peak_rss_mb": peak_mb, **figures}))


if __name__ == "__main__":
    main(sys.argv[1:])
