"""Measure what the SQL guard's process boundary costs whole questions (a measurement only).

Usage: PYTHONPATH=src python scripts/guard_boundary.py --db STORE --dataset QA/test.jsonl
--dataset QA/val.jsonl

One warm engine asks the questions of ``--dataset`` (shuffled with ``--seed``; the first
``--warmup`` untimed, the rest cut into ``2 × --rounds`` parts, none asked twice) with its
guard's session run two ways, part by part in turn:

* ``worker``: as always, in the guard's worker process (killed at the hard deadline, its
  memory capped);
* ``in-process``: the very same session code (``foretab.sql.worker``'s session: parse,
  rules, verdict cache, rendering, DuckDB with the guard's settings) opened with the
  executor's own open request and called in place of the pipe round trip.

It prints the CPU a question (the engine's process time, plus the worker's threads' run
time from ``schedstat``), the warm wall p50 and the host's speed (the 10M-addition loop).
The difference is the boundary: see docs/experiments.md#guard-hop. Nothing here changes
how foretab runs SQL.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import time
from pathlib import Path

from foretab import Engine
from foretab.bench.perf.host import loop_seconds
from foretab.bench.perf.proc import process_tree, run_ns
from foretab.errors import ForetabError
from foretab.sql import worker as guard_worker


def _questions(path: Path) -> list[str]:
    return [json.loads(line)["question"] for line in path.read_text().splitlines() if line]


def main() -> None:
    """Print one line per pass: the mode, CPU a question, warm p50, the host's loop."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True)
    parser.add_argument(
        "--dataset", type=Path, action="append", required=True, help="QA .jsonl (repeatable)"
    )
    parser.add_argument("--warmup", type=int, default=200, help="untimed questions first")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    questions = sorted({q for path in args.dataset for q in _questions(path)})
    random.Random(args.seed).shuffle(questions)
    timed = questions[args.warmup :]
    size = len(timed) // (2 * args.rounds)
    parts = [timed[i * size : (i + 1) * size] for i in range(2 * args.rounds)]
    engine = Engine.open(args.db)
    for question in questions[: args.warmup]:
        with contextlib.suppress(ForetabError):
            engine.ask(question)
    guard = engine.guard
    # Private parts on purpose: the measurement swaps the round trip and nothing else.
    worker = guard._worker
    assert worker is not None, "the engine's guard has no worker process"
    session = guard_worker._Session(guard._open_request, guard_worker._Watchdog())
    through_pipe = worker.call
    workers = process_tree(os.getpid())[1:]  # the guard's worker processes

    def in_process(message: object, deadline_s: float) -> object:
        del deadline_s  # nothing kills a statement run here: why the worker exists
        assert isinstance(message, guard_worker.QueryRequest)
        return session.run(message)

    def one_pass(mode: str, part: list[str]) -> None:
        guard_before, cpu_before = run_ns(workers), time.process_time()
        walls = []
        for question in part:
            started = time.perf_counter()
            with contextlib.suppress(ForetabError):
                engine.ask(question)
            walls.append((time.perf_counter() - started) * 1000)
        engine_ms = (time.process_time() - cpu_before) * 1000 / len(part)
        guard_ms = (run_ns(workers) - guard_before) / 1e6 / len(part)
        print(
            f"{mode:10s} {len(part)} questions: CPU a question {engine_ms:.2f} + {guard_ms:.2f} = "
            f"{engine_ms + guard_ms:.2f} ms (engine + worker); warm p50 "
            f"{statistics.median(walls):.2f} ms; host loop {loop_seconds():.2f} s",
            flush=True,
        )

    try:
        for i in range(args.rounds):
            worker.call = through_pipe  # type: ignore[method-assign]
            one_pass("worker", parts[2 * i])
            worker.call = in_process  # type: ignore[method-assign]
            one_pass("in-process", parts[2 * i + 1])
    finally:
        worker.call = through_pipe  # type: ignore[method-assign]
        session.close()
        engine.close()


if __name__ == "__main__":
    main()
