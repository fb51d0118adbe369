"""The guard's hard limits, enforced outside the query engine (docs/safety.md).

Every guarded statement is parsed, checked and run in a worker process that is killed at
``timeout_s × HARD_DEADLINE_FACTOR`` whatever it is doing (the engine is asked to stop
at ``timeout_s`` first), whose address space is capped at ``memory_bytes``; results are
capped by rows and by bytes, and statements by length.
"""

from __future__ import annotations

from dataclasses import dataclass

from foretab.errors import QueryError

DEFAULT_MAX_ROWS = 10_000
DEFAULT_TIMEOUT_S = 5.0
DEFAULT_MAX_RESULT_BYTES = 64 * 2**20
DEFAULT_MAX_QUERY_CHARS = 100_000
DEFAULT_MEMORY_BYTES = 2 * 2**30
# The worker is killed this long after it was asked to stop (×timeout_s): well within 2×.
HARD_DEADLINE_FACTOR = 1.5
# Opening a store (connect, read the catalog) in a fresh worker; generous for a busy host.
OPEN_TIMEOUT_S = 60.0


@dataclass(frozen=True, slots=True)
class GuardLimits:
    """Limits of one guarded executor."""

    timeout_s: float = DEFAULT_TIMEOUT_S
    max_rows: int = DEFAULT_MAX_ROWS
    max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES
    max_query_chars: int = DEFAULT_MAX_QUERY_CHARS
    memory_bytes: int = DEFAULT_MEMORY_BYTES

    def __post_init__(self) -> None:
        if self.max_rows < 1:
            raise QueryError(f"max_rows must be at least 1, got {self.max_rows}")
        if self.timeout_s <= 0:
            raise QueryError(f"timeout_s must be positive, got {self.timeout_s}")
        if self.max_result_bytes < 1024:
            raise QueryError(f"max_result_bytes must be at least 1024, got {self.max_result_bytes}")
        if self.max_query_chars < 1:
            raise QueryError(f"max_query_chars must be positive, got {self.max_query_chars}")
        if self.memory_bytes < 256 * 2**20:
            raise QueryError(
                f"memory_bytes must be at least 256 MiB, got {self.memory_bytes}; "
                "the worker needs that much to start"
            )

    @property
    def hard_deadline_s(self) -> float:
        """When the worker is killed, counted from the moment the statement was sent."""
        return self.timeout_s * HARD_DEADLINE_FACTOR


def describe_bytes(n: int) -> str:
    """``67108864`` -> ``64 MiB``."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n} bytes"
