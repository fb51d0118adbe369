"""``ConversationStore``: a server's conversations, bounded in number, turns and age.

A conversation is kept as the texts of its turns that were answered (or clarified), not
as plans or answers: the next request replays them through the resolver (``Conversation.
replay``, planning only, a few ms a turn) on whichever engine — or worker process — serves
it. So the state is small (at most ``max_turns`` short strings per conversation), the same
for every worker of ``foretab serve --workers N`` (an SQLite file they share; in memory for
one process), and never holds a store's rows.

Every conversation belongs to an owner (a digest of the bearer token it was started with,
"" without one): another owner's id is as unknown as a made-up one. Past ``max_age_s``
since its last turn a conversation is gone; past ``max_conversations`` per owner the
least recently used one is dropped. A conversation is replayed from its first turn (each
follow-up reads the turns before it), so it is never cut: the API ends one that has had
``max_turns`` turns (``save`` keeps the last ``max_turns`` texts only as a backstop).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversation (
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    used REAL NOT NULL,
    turns TEXT NOT NULL,
    PRIMARY KEY (owner, id)
);
CREATE INDEX IF NOT EXISTS conversation_used ON conversation (owner, used);
CREATE INDEX IF NOT EXISTS conversation_age ON conversation (used);
"""


@dataclass(frozen=True, slots=True)
class ConversationLimits:
    """How much a server keeps: conversations per owner, turns per conversation, idle seconds."""

    max_conversations: int = 1000
    max_turns: int = 30
    max_age_s: float = 3600.0

    def __post_init__(self) -> None:
        if self.max_conversations < 1 or self.max_turns < 1 or self.max_age_s <= 0:
            raise ValueError("conversation limits must be positive")


def owner_of(token: str | None) -> str:
    """The owner key of a bearer token (a digest: the store never holds the token itself)."""
    if not token:
        return ""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()[:32]


class ConversationStore:
    """Conversations by (owner, id); thread-safe; ``path`` shared by worker processes."""

    def __init__(
        self,
        path: str = ":memory:",
        limits: ConversationLimits | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.limits = limits or ConversationLimits()
        self.clock = clock  # seconds; replaceable (tests move time on)
        self._lock = threading.Lock()
        # autocommit; a worker waits up to 5 s for another's write
        self._db = sqlite3.connect(path, timeout=5.0, check_same_thread=False, isolation_level=None)
        if path != ":memory:":
            self._db.execute("PRAGMA journal_mode=WAL")
            # Consistent after a crash; a power cut may lose the last turns saved, not the
            # file (a conversation is a convenience): no fsync on every request's commit.
            self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)

    def new(self, owner: str) -> str:
        """A fresh conversation id of ``owner`` (stored with its first turn, by ``save``)."""
        del owner  # ids are random; ownership is recorded when the first turn is saved
        return secrets.token_urlsafe(16)

    def load(self, owner: str, conversation_id: str) -> list[str] | None:
        """The turns of ``owner``'s conversation, or None if unknown, expired or another's."""
        with self._lock:
            row = self._db.execute(
                "SELECT used, turns FROM conversation WHERE owner = ? AND id = ?",
                (owner, conversation_id),
            ).fetchone()
            if row is None:
                return None
            if self.clock() - row[0] > self.limits.max_age_s:
                self._db.execute(
                    "DELETE FROM conversation WHERE owner = ? AND id = ?", (owner, conversation_id)
                )
                return None
            return list(json.loads(row[1]))

    def save(self, owner: str, conversation_id: str, turns: list[str]) -> None:
        """Store ``turns`` (the last ``max_turns`` of them) and apply the limits.

        Every request of the API saves a turn, so the limits cost no more than the index
        work of the rows they remove: the age limit deletes through the ``used`` index, and
        only a new conversation can take its owner past ``max_conversations`` (it then
        drops the least recently used ones, through the ``(owner, used)`` index). Before,
        one statement ranked all of an owner's conversations on every save: ~1.2 ms a
        request with 1,000 kept.
        """
        kept = turns[-self.limits.max_turns :]
        now = self.clock()
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                known = self._db.execute(
                    "SELECT 1 FROM conversation WHERE owner = ? AND id = ?",
                    (owner, conversation_id),
                ).fetchone()
                self._db.execute(
                    "INSERT INTO conversation (owner, id, used, turns) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (owner, id) DO UPDATE SET used = excluded.used, turns = excluded.turns",
                    (owner, conversation_id, now, json.dumps(kept, ensure_ascii=False)),
                )
                self._db.execute(
                    "DELETE FROM conversation WHERE used < ?", (now - self.limits.max_age_s,)
                )
                if known is None:
                    self._drop_least_recent(owner, conversation_id)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def _drop_least_recent(self, owner: str, conversation_id: str) -> None:
        """Drop ``owner``'s least recently used conversations past ``max_conversations``.

        Ties in ``used`` go by insertion order (an index's rowid): the earlier goes first.
        """
        (held,) = self._db.execute(
            "SELECT count(*) FROM conversation WHERE owner = ?", (owner,)
        ).fetchone()
        over = int(held) - self.limits.max_conversations
        if over > 0:
            self._db.execute(
                "DELETE FROM conversation WHERE rowid IN (SELECT rowid FROM conversation "
                "WHERE owner = ? AND id != ? ORDER BY used, rowid LIMIT ?)",
                (owner, conversation_id, over),
            )

    def count(self, owner: str | None = None) -> int:
        """Conversations kept (of ``owner``, or of everyone)."""
        with self._lock:
            if owner is None:
                return int(self._db.execute("SELECT count(*) FROM conversation").fetchone()[0])
            return int(
                self._db.execute(
                    "SELECT count(*) FROM conversation WHERE owner = ?", (owner,)
                ).fetchone()[0]
            )

    def close(self) -> None:
        with self._lock:
            self._db.close()
