"""A response cache keyed by the full request, in one SQLite file (``--llm-cache PATH``).

Benchmark reruns with the same prompts cost nothing; any change to the model, the messages,
the tools or the sampling options is a different key.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path

from foretab.llm.errors import LLMConfigError
from foretab.llm.types import ChatRequest, Completion

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    request TEXT NOT NULL,
    completion TEXT NOT NULL,
    created REAL NOT NULL
)
"""


class ResponseCache:
    """Thread-safe get/put of completions by ``ChatRequest.key()``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(self.path, check_same_thread=False)
            self._conn.execute(_SCHEMA)
            self._conn.commit()
        except sqlite3.Error as error:
            raise LLMConfigError(
                f"cannot use {str(self.path)!r} as the LLM cache ({error}); pass another "
                "--llm-cache PATH"
            ) from None
        self._lock = threading.Lock()

    def get(self, request: ChatRequest) -> Completion | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT completion FROM responses WHERE key = ?", (request.key(),)
            ).fetchone()
        return None if row is None else Completion.model_validate_json(row[0])

    def put(self, request: ChatRequest, completion: Completion) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?)",
                (
                    request.key(),
                    json.dumps(request.body(), ensure_ascii=False),
                    completion.model_dump_json(),
                    time.time(),
                ),
            )
            self._conn.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT count(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()
