"""One core per server worker (``foretab serve --pin-cores``), on Linux.

Kept apart from ``foretab.web`` (which imports the whole server) so that checking whether
pinning is possible costs nothing.
"""

from __future__ import annotations

import contextlib
import os


def can_pin() -> bool:
    """Whether this system lets a process choose its cores (Linux's sched_setaffinity)."""
    return hasattr(os, "sched_setaffinity") and os.path.isdir("/proc/self/task")


def pin_to_core(worker: int) -> int:
    """Run this process on one core from now on: the ``worker``-th usable one (round robin).

    Every thread it has is moved (an affinity is per thread on Linux) and every thread and
    process it starts later inherits it, so a worker's engines, event loop and guard
    workers share one core and its caches instead of being moved between cores by each
    hand-off (docs/benchmarks/latency.md, pinned workers). Returns the core.
    """
    cores = sorted(os.sched_getaffinity(0))
    core = cores[worker % len(cores)]
    for task in os.listdir("/proc/self/task"):
        with contextlib.suppress(ProcessLookupError):  # a thread that has just ended
            os.sched_setaffinity(int(task), {core})
    return core
