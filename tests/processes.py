"""Whether a process still runs, read from ``/proc`` (Linux)."""

from __future__ import annotations

import sys

import pytest

needs_proc = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def running(pid: int) -> bool:
    """True while ``pid`` runs: not gone, and not a zombie waiting for its parent."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            # The state follows the command name in parentheses, which may hold spaces.
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
