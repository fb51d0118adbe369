"""How fast the host runs plain Python at the moment: the figure timings are read against.

The team's hosts are shared virtual machines whose speed drifts by the hour: the same
loop of 10M additions took 0.56 s one morning and 0.99–1.10 s that night, and every
latency figure moved with it (docs/development.md, docs/benchmarks/latency.md). A
benchmark figure taken without the host's speed at the time cannot be compared with
another, so ``foretab bench latency`` and ``bench serve`` time this loop before and after
their runs and print it beside their figures.
"""

from __future__ import annotations

import time

#: Additions of the loop: the team's "10M-addition loop" of the docs.
LOOP_ADDITIONS = 10_000_000

# At module level, as the docs' loop was run (``python -c``): its variables live in a dict
# of globals, not in a function's fast locals, so the figures stay comparable.
_LOOP = "s = 0\nfor i in range(n):\n    s += i\n"


def loop_seconds(additions: int | None = None) -> float:
    """CPU seconds this process takes for the loop of ``additions`` (default 10M) additions.

    CPU, not wall time: another process on the same cores does not lengthen it, but a
    slower host (its clock, its caches shared with other machines) does.
    """
    code = compile(_LOOP, "<host loop>", "exec")
    namespace = {"n": LOOP_ADDITIONS if additions is None else additions}
    started = time.process_time()
    exec(code, namespace)  # our own constant loop: no outside text runs here
    return time.process_time() - started


def loop_ms_text(before_after: tuple[float, float]) -> str:
    """``before / after`` in milliseconds: the row the benchmark commands print."""
    before, after = before_after
    return f"{before * 1000:.0f} / {after * 1000:.0f}"
