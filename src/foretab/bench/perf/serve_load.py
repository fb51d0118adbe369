"""Load test of ``foretab serve`` on loopback: bounded requests, fixed concurrency.

Starts the server as its own process on a free 127.0.0.1 port, sends ``requests`` questions
with ``concurrency`` in flight at once, then stops it. Reports throughput, latency
percentiles, statuses (503s, the full queue's answer, apart), and the resident memory of
each server worker (``/proc``). Traffic goes to loopback only, and the run is bounded in
count and time.

``compare`` runs it twice, with one worker and with N, each over its own questions:
``load_questions`` gives distinct questions of every family of the QA builder (English and
Chinese) in a seeded shuffle, and no question is sent twice, so no figure comes from a
repeat (the engine keeps no answer cache; the guard's verdict cache is per statement text).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from foretab.bench.perf.host import loop_seconds
from foretab.bench.perf.proc import cpu_seconds, process_tree
from foretab.errors import ForetabError

#: Hard bound on one run, whatever the request count.
MAX_SECONDS = 600.0


@dataclass(frozen=True, slots=True)
class LoadReport:
    """One load run; latencies in milliseconds, memory in MiB."""

    requests: int
    concurrency: int
    engines: int
    future: str
    workers: int
    seconds: float
    throughput_rps: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    statuses: dict[str, int]
    errors: int  # transport failures and 5xx but 503: what must be zero
    busy: int  # 503: the server's queue was full (answered at once with Retry-After)
    refused: int  # 4xx: questions the engine explained it cannot answer
    # CPU time (user + system) of the whole server over the timed requests, per request:
    # what each answer costs, less moved than throughput by other programs on the cores.
    cpu_ms_per_request: float
    # Resident memory of the whole server (every worker and its guard workers) ...
    rss_start_mib: float
    rss_warm_mib: float
    rss_half_mib: float
    rss_end_mib: float
    # ... and of each worker (with its guard workers) at the end.
    rss_per_worker_mib: list[float]
    processes: int
    # The machine's 1-minute load average before and after: figures from a busy machine
    # measure the contention, not the server.
    load_before: float
    load_after: float
    # The host's speed before and after the timed requests (the server warm and idle):
    # CPU seconds of the 10M-addition loop (``foretab.bench.perf.host``); on a shared host
    # the same server's figures move with it.
    host_loop_s: tuple[float, float]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _spawned(pid: int) -> list[int]:
    """The worker processes of a ``foretab serve --workers N`` supervisor (none for 1)."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError):
            for child in task.read_text().split():
                with contextlib.suppress(OSError):
                    if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                        found.append(int(child))
    return found


def _worker_rss_mib(pid: int) -> list[float]:
    """Resident memory of each worker and its guard workers (the server itself for one)."""
    return [round(_rss_mib(w), 1) for w in (_spawned(pid) or [pid])]


def _rss_mib(pid: int) -> float:
    """Resident memory of the server and its worker processes, MiB (Linux /proc)."""
    total = 0
    for member in process_tree(pid):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{member}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    return total / 1024 if total else float("nan")


@contextlib.contextmanager
def running_server(
    db: str, *, future: str, engines: int, workers: int = 1
) -> Iterator[tuple[str, int]]:
    """``foretab serve`` on a free loopback port, every worker warm: yields (base URL, pid)."""
    from foretab.extras import require

    require("httpx", "bench")
    require("aiohttp", "bench")
    require("uvicorn", "serve")
    import httpx

    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "FORETAB_TOKEN"}
    with tempfile.TemporaryFile("w+") as log:
        command = [sys.executable, "-m", "foretab", "serve", "--db", db, "--port", str(port)]
        command += ["--future", future, "--engines", str(engines), "--workers", str(workers)]
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                if process.poll() is not None:
                    log.seek(0)
                    raise ForetabError(f"foretab serve exited early:\n{log.read()[-2000:]}")
                log.seek(0)
                announced = "foretab serve: http" in log.read()  # once every worker is warm
                with contextlib.suppress(httpx.TransportError):
                    if announced and httpx.get(url + "/api/health", timeout=2).status_code == 200:
                        break
                if time.monotonic() > deadline:
                    raise ForetabError("foretab serve did not answer /api/health within 60 s")
                time.sleep(0.1)
            yield url, process.pid
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


async def _load(
    url: str, questions: Sequence[str], concurrency: int
) -> tuple[list[float], Counter[str], float]:
    # aiohttp, not httpx: 0.3 ms of the client's CPU a request at 20 in flight against
    # httpx's 1.5 (0.36 / 0.92 at one), taken from the cores the server runs on
    # (docs/benchmarks/latency.md, 2026-12-06, HTTP path).
    import aiohttp

    queue: asyncio.Queue[str] = asyncio.Queue()
    for q in questions:
        queue.put_nowait(q)
    latencies: list[float] = []
    statuses: Counter[str] = Counter()
    connector = aiohttp.TCPConnector(limit=concurrency, force_close=False)
    headers = {"content-type": "application/json"}
    timeout = aiohttp.ClientTimeout(total=30)
    async with aiohttp.ClientSession(url, connector=connector, timeout=timeout) as client:

        async def worker() -> None:
            while not queue.empty():
                question = queue.get_nowait()
                body = json.dumps({"question": question}, ensure_ascii=False).encode()
                started = time.perf_counter()
                try:
                    async with client.post("/api/ask", data=body, headers=headers) as response:
                        await response.read()
                        statuses[str(response.status)] += 1
                except (aiohttp.ClientError, TimeoutError) as error:
                    statuses[type(error).__name__] += 1
                latencies.append((time.perf_counter() - started) * 1000)

        started = time.perf_counter()
        await asyncio.wait_for(
            asyncio.gather(*(worker() for _ in range(concurrency))), timeout=MAX_SECONDS
        )
        return latencies, statuses, time.perf_counter() - started


def _percentile(values: Sequence[float], q: float) -> float:
    return (
        statistics.quantiles(values, n=100, method="inclusive")[q - 1]
        if len(values) > 1
        else values[0]
    )


def run_load(
    db: str,
    questions: Sequence[str],
    *,
    concurrency: int = 20,
    engines: int = 2,
    future: str = "model",
    warmup: int = 20,
    workers: int = 1,
) -> LoadReport:
    """Serve ``db``, warm it with the first ``warmup`` questions, then time the rest.

    Every question is sent once; the warm-up ones are not timed.
    """
    timed = list(questions[warmup:])
    if not timed:
        raise ForetabError("no questions to send past the warm-up; is the store empty?")
    load_before = os.getloadavg()[0]
    with running_server(db, future=future, engines=engines, workers=workers) as (url, pid):
        rss_start = _rss_mib(pid)
        if warmup:
            asyncio.run(_load(url, list(questions[:warmup]), min(concurrency, engines * workers)))
        rss_warm = _rss_mib(pid)
        host_before = loop_seconds()
        members = process_tree(pid)  # every process of the server, guard workers included
        cpu_start = cpu_seconds(members)
        # Two halves: memory after each shows whether it still grows once warm.
        half = len(timed) // 2
        first = asyncio.run(_load(url, timed[:half], concurrency)) if half else None
        rss_half = _rss_mib(pid)
        second = asyncio.run(_load(url, timed[half:], concurrency))
        server_cpu_s = cpu_seconds(members) - cpu_start
        rss_end = _rss_mib(pid)
        per_worker = _worker_rss_mib(pid)
        latencies = (first[0] if first else []) + second[0]
        statuses = (first[1] if first else Counter()) + second[1]
        seconds = (first[2] if first else 0.0) + second[2]
        processes = len(process_tree(pid))
        host_after = loop_seconds()
    busy = statuses.get("503", 0)
    errors = sum(n for s, n in statuses.items() if not s.isdigit() or int(s) >= 500) - busy
    refused = sum(n for s, n in statuses.items() if s.isdigit() and 400 <= int(s) < 500)
    return LoadReport(
        requests=len(latencies),
        concurrency=concurrency,
        engines=engines,
        future=future,
        workers=workers,
        seconds=round(seconds, 3),
        throughput_rps=round(len(latencies) / seconds, 1),
        p50_ms=round(_percentile(latencies, 50), 2),
        p95_ms=round(_percentile(latencies, 95), 2),
        p99_ms=round(_percentile(latencies, 99), 2),
        max_ms=round(max(latencies), 2),
        statuses=dict(sorted(statuses.items())),
        errors=errors,
        busy=busy,
        refused=refused,
        cpu_ms_per_request=round(1000 * server_cpu_s / len(latencies), 2),
        rss_start_mib=round(rss_start, 1),
        rss_warm_mib=round(rss_warm, 1),
        rss_half_mib=round(rss_half, 1),
        rss_end_mib=round(rss_end, 1),
        rss_per_worker_mib=per_worker,
        processes=processes,
        load_before=round(load_before, 2),
        load_after=round(os.getloadavg()[0], 2),
        host_loop_s=(round(host_before, 3), round(host_after, 3)),
    )


@dataclass(frozen=True, slots=True)
class QuestionMix:
    """Distinct questions and what they are: ``(question, family, language)``."""

    items: list[tuple[str, str, str]]

    @property
    def questions(self) -> list[str]:
        return [q for q, _, _ in self.items]

    def counts(self) -> dict[str, int]:
        """How many of each ``family/language``."""
        return dict(sorted(Counter(f"{f}/{lang}" for _, f, lang in self.items).items()))


def read_questions(paths: Sequence[Path]) -> list[tuple[str, str, str]]:
    """``(question, family, language)`` of QA items (``.jsonl`` files, or folders of them)."""
    files: list[Path] = []
    for path in paths:
        files += sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    if not files:
        raise ForetabError(f"no .jsonl question files in {', '.join(map(str, paths))}")
    found = []
    for file in files:
        for line in file.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                family = row.get("family") or f"odtqa {row.get('task', '?')}"
                found.append((str(row["question"]), str(family), str(row.get("language", "en"))))
    return found


def load_questions(
    db: str, *, dataset: Sequence[Path] = (), seed: int = 0, test_size: int = 600
) -> QuestionMix:
    """Distinct questions of every family, shuffled with ``seed``.

    From ``dataset`` (what `foretab bench build` wrote) or, without one, from a QA dataset
    built from ``db`` now into a temporary folder (all three splits: the server is not
    being scored, only timed). Each question text appears once.
    """
    import random

    if dataset:
        rows = read_questions(dataset)
    else:
        from foretab.bench.qa.build import BuildConfig, build_dataset

        with tempfile.TemporaryDirectory(prefix="foretab-serve-questions-") as folder:
            build_dataset(db, folder, BuildConfig(seed=seed, test_size=test_size))
            rows = read_questions([Path(folder)])
    seen: set[str] = set()
    distinct = []
    for row in rows:
        if row[0] not in seen:
            seen.add(row[0])
            distinct.append(row)
    random.Random(f"foretab-bench-serve-{seed}").shuffle(distinct)
    return QuestionMix(distinct)


@dataclass(frozen=True, slots=True)
class ServeComparison:
    """One worker and N workers over the same kind of load, each on its own questions."""

    distinct_questions: int
    families: dict[str, int]
    runs: list[LoadReport]


def compare(
    db: str,
    mix: QuestionMix,
    *,
    requests: int,
    concurrency: int,
    engines: int,
    future: str,
    workers: int,
    warmup: int = 20,
) -> ServeComparison:
    """``run_load`` with 1 worker, then with ``workers``; no question is sent twice."""
    counts = [1] if workers <= 1 else [1, workers]
    needed = len(counts) * (requests + warmup)
    if len(mix.items) < needed:
        raise ForetabError(
            f"{len(mix.items)} distinct questions, {needed} needed ({len(counts)} runs of "
            f"{warmup} warm-up + {requests} timed, none repeated); ask for fewer --requests, "
            "or build a bigger question set (`foretab bench build --test-size N`, --dataset)"
        )
    used = mix.items[:needed]
    runs = []
    for i, n in enumerate(counts):
        chunk = [q for q, _, _ in used[i * (requests + warmup) : (i + 1) * (requests + warmup)]]
        runs.append(
            run_load(
                db,
                chunk,
                concurrency=concurrency,
                engines=engines,
                future=future,
                warmup=warmup,
                workers=n,
            )
        )
    return ServeComparison(
        distinct_questions=len(used),
        families=QuestionMix(used).counts(),
        runs=runs,
    )


def write_json(report: LoadReport | ServeComparison, path: Path) -> None:
    """The report as one JSON object."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(report), indent=2) + "\n", encoding="utf-8")
