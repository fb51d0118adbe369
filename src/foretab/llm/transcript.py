"""Record/replay of transcripts: every request, its completion and its call record as JSONL.

``TranscriptRecorder`` appends while a real provider runs (``--llm-record PATH``);
``ReplayProvider`` answers from such a file and never touches the network
(``--llm-replay PATH``): a request not in it is an error, not a silent fallback.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from foretab.llm.errors import LLMConfigError, LLMReplayMiss
from foretab.llm.options import LLMOptions
from foretab.llm.provider import LLMProvider
from foretab.llm.types import ChatRequest, Completion, LLMCall


class TranscriptEntry(BaseModel):
    """One line of a transcript file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str
    request: ChatRequest
    completion: Completion
    call: LLMCall


class TranscriptRecorder:
    """Appends one ``TranscriptEntry`` per call to a JSONL file (thread-safe)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def record(self, request: ChatRequest, completion: Completion, call: LLMCall) -> None:
        entry = TranscriptEntry(
            key=request.key(), request=request, completion=completion, call=call
        )
        line = entry.model_dump_json() + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(line)


def read_transcript(path: str | Path) -> list[TranscriptEntry]:
    """Every entry of a transcript file, or a clear error naming the bad line."""
    path = Path(path)
    if not path.is_file():
        raise LLMConfigError(
            f"transcript {str(path)!r} does not exist; record one with --llm-record PATH"
        )
    entries = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entries.append(TranscriptEntry.model_validate_json(line))
        except ValidationError as error:
            raise LLMConfigError(
                f"{str(path)!r} line {number} is not a transcript entry: {error.errors()[0]['msg']}"
            ) from None
    return entries


class ReplayProvider(LLMProvider):
    """Answers each request with the recorded completion of the same request key."""

    source = "replay"

    def __init__(self, path: str | Path, options: LLMOptions | None = None) -> None:
        super().__init__(options or LLMOptions(model="replay"))
        self.path = Path(path)
        self._replies = {e.key: e.completion for e in read_transcript(path)}

    def _complete(self, request: ChatRequest) -> tuple[Completion, int, tuple[str, ...]]:
        completion = self._replies.get(request.key())
        if completion is None:
            first = request.messages[-1].content if request.messages else ""
            raise LLMReplayMiss(
                f"transcript {str(self.path)!r} has no reply for this request (last message "
                f"{(first or '')[:80]!r}); the prompt or options changed since it was "
                "recorded: re-record it with --llm-record PATH against a real server"
            )
        return completion, 0, ()


def dump_entries(entries: list[TranscriptEntry]) -> str:
    """JSONL text of entries (used to write transcripts by hand in tests)."""
    return "".join(
        json.dumps(e.model_dump(mode="json"), ensure_ascii=False) + "\n" for e in entries
    )
