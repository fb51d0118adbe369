"""Input limits shared by every entry point (CLI, HTTP API, Python ``Engine``)."""

from __future__ import annotations

from foretab.errors import QuestionError

#: Longest question accepted: real questions are one sentence; this bounds parse work
#: (a 16 KB question once took 12.7 s to parse).
MAX_QUESTION_CHARS = 500


def check_question(question: str) -> None:
    """Refuse an over-long question before any parsing."""
    if len(question) > MAX_QUESTION_CHARS:
        raise QuestionError(
            f"the question is {len(question):,} characters long; at most "
            f"{MAX_QUESTION_CHARS} are accepted. Ask one shorter question."
        )
