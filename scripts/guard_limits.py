"""Measure the SQL guard's limits on a store: per-query overhead, time to stop, memory.

Usage: PYTHONPATH=src python scripts/guard_limits.py --db runs/corpus.duckdb

* overhead: p50 of ``GuardedExecutor.execute`` (worker process) minus p50 of the same
  parse + check + run done in this process, for a one-project history read;
* stop: wall time of a 300-way self-join (planning DuckDB cannot interrupt) at --timeout;
* memory: the worker's peak RSS and this process's growth during a string bomb.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time

from foretab.sql.connect import resolve_target
from foretab.sql.guard import GuardedExecutor
from foretab.sql.statement import checked_query
from foretab.store import open_history


def _p50(fn, n: int) -> float:  # noqa: ANN001
    for _ in range(10):
        fn()
    times = []
    for _ in range(n):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main() -> None:
    """Print the three figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", required=True)
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--timeout", type=float, default=1.0)
    args = parser.parse_args()
    with open_history(args.db) as store:
        entry = store.catalog()[0]
        project = next(p for p in store.entities() if p.inner == entry.inner)
    sql = f"SELECT month, price FROM {entry.table_name} WHERE project_name = ? ORDER BY month"
    with GuardedExecutor(args.db) as guard:
        in_worker = _p50(lambda: guard.execute(sql, [project.name]), args.n)
        allowed, reserved = guard.allowed_tables, guard.reserved_names
    target = resolve_target(args.db)
    conn = target.backend.connect(target.history, purpose="guard", timeout_s=5.0)

    def local() -> None:
        query, _ = checked_query(sql, target.dialect, allowed, reserved, 10_001)
        conn.fetch(query, [project.name], max_rows=10_000, max_bytes=64 * 2**20)

    in_process = _p50(local, args.n)
    conn.close()
    print(f"guard p50 {in_worker:.2f} ms, same work in-process {in_process:.2f} ms, "
          f"overhead {in_worker - in_process:.2f} ms")  # fmt: skip

    bomb = "SELECT count(*) FROM " + ", ".join(f"{entry.table_name} a{i}" for i in range(300))
    with GuardedExecutor(args.db, timeout_s=args.timeout) as guard:
        started = time.perf_counter()
        try:
            guard.execute(bomb)
        except Exception as error:
            outcome = type(error).__name__
        else:
            outcome = "finished"
        stopped = time.perf_counter() - started
    print(f"300-way join at timeout {args.timeout:g} s: {outcome} after {stopped:.2f} s")

    t = entry.table_name
    strings = (
        "SELECT length(string_agg(a.project_name || b.project_name || c.project_name, ',')) "
        f"FROM {t} a, {t} b, {t} c, {t} d"
    )
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with GuardedExecutor(args.db, timeout_s=10.0) as guard:
        pid = guard._worker.process.pid  # type: ignore[union-attr]
        try:
            guard.execute(strings)
            outcome = "finished"
        except Exception as error:
            outcome = f"{type(error).__name__}: {error}"[:100]
        with open(f"/proc/{pid}/status") as status:
            peak = next(line.split()[1] for line in status if line.startswith("VmHWM"))
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    print(f"string bomb: {outcome}; worker peak RSS {int(peak) // 1024} MiB "
          f"(cap {guard.limits.memory_bytes // 2**20} MiB address space); "
          f"this process grew {grown // 1024} MiB")  # fmt: skip


if __name__ == "__main__":
    main()
