"""CPU and process figures of a process tree, read from Linux ``/proc``.

The benchmarks count CPU time, not only wall time: on a shared 2-core host the wall
figures drift by the hour while a question's CPU moves much less. A process's children
are read from ``/proc/PID/task/*/children`` (the guard's worker processes are children of
the engine's or server's process).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path


def process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants, ``pid`` first."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                todo += [int(c) for c in task.read_text().split()]
    return found


def run_ns(pids: Sequence[int]) -> int:
    """Nanoseconds the live threads of the processes ``pids`` have run (``schedstat``).

    Finer than ``cpu_seconds``' clock ticks (one question's read is ~1 ms); a thread or
    process that has exited no longer counts.
    """
    total = 0
    for pid in pids:
        for task in Path(f"/proc/{pid}/task").glob("*/schedstat"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                total += int(task.read_text().split()[0])
    return total


def cpu_seconds(pids: Sequence[int]) -> float:
    """User + system CPU seconds the processes ``pids`` have used so far (gone ones: 0)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            # proc(5) fields 14 and 15 (utime, stime), counted from the state (field 3), the
            # first after the command's closing parenthesis (a command may hold spaces)
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
    return total / tick
