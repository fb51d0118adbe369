"""Allowed verdicts a process's guard workers gave, offered to its other workers.

A guard worker remembers the statements it allowed (``foretab.sql.worker._Session``), but
every engine has its own worker: a server with 4 engines checked each statement shape up
to 4 times. The parent keeps each verdict a worker sends back (``Checked``) under the
session fingerprint it was reached with, and sends it along with the same statement to
another worker of the same fingerprint (``QueryRequest.known``), which uses it only if
fingerprint, statement digest and row cap are its own. Refusals are never kept: a refused
statement is checked afresh by every worker, every time.
"""

from __future__ import annotations

import threading

from foretab.core.recent import Recent
from foretab.sql.worker import Verdict, source_digest

#: Verdicts kept per process (least recently used dropped): a few sessions' worth.
KEPT = 2048


class VerdictBook:
    """Allowed verdicts by (fingerprint, statement text, row cap); thread-safe, bounded."""

    def __init__(self, kept: int = KEPT) -> None:
        self._lock = threading.Lock()
        self._verdicts: Recent[tuple[str, str, int], Verdict] = Recent(kept)

    def get(self, fingerprint: str, sql: str, max_rows: int) -> Verdict | None:
        """The verdict of ``sql`` under ``fingerprint`` and ``max_rows``, if one was given."""
        with self._lock:
            return self._verdicts.get((fingerprint, sql, max_rows))

    def put(self, sql: str, verdict: Verdict) -> None:
        """Keep ``verdict``, a worker's for the statement ``sql`` (else it is not kept)."""
        if not verdict.fingerprint or verdict.source != source_digest(sql):
            return
        with self._lock:
            self._verdicts.put((verdict.fingerprint, sql, verdict.max_rows), verdict)

    def clear(self) -> None:
        with self._lock:
            self._verdicts.clear()


#: The process's book, shared by every ``GuardedExecutor``.
VERDICTS = VerdictBook()
