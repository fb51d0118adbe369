"""The words of a follow-up, one ``FollowUpWords`` per language (``en.py``, ``zh.py``).

Each pattern claims a span of the follow-up for one slot it replaces (docs/conversations.md):
what no pattern, name, time or filler word claims is refused by name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FollowUpWords:
    """The patterns that read a follow-up in one language."""

    #: the whole text is a follow-up (else it is asked as a question of its own)
    follow_up: re.Pattern[str]
    #: "compared with last year" / 和去年比: one month against the same month a year earlier
    last_year: re.Pattern[str]
    #: "compared with X" / 和X比: X is added to the subjects (the marker; X is a name)
    add_subject: re.Pattern[str]
    #: "both" / 都: a clarify's every candidate, else the thread's two subjects
    both: re.Pattern[str]
    #: "the first one" / 第一个 / "1": a clarify's choice (group ``n``)
    choice: re.Pattern[str]
    #: "the two" / "them" / 两个: the thread's two subjects inside a question of its own
    the_two: re.Pattern[str]
    lowest: re.Pattern[str]
    highest: re.Pattern[str]
    percent: re.Pattern[str]
    mean: re.Pattern[str]
    each: re.Pattern[str]
    #: words a follow-up may hold that mean nothing of their own ("and", "instead", 那, 呢)
    filler: re.Pattern[str]
    #: how a question of its own opens ("What …", "Which …", "Will …"): inside a
    #: conversation, text that opens otherwise ("same for X", "max instead") is a follow-up
    full_question: re.Pattern[str]
    #: "it" / "that": the previous subject, inside a question that names none
    pronoun: re.Pattern[str]


ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
    "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
}  # fmt: skip


def ordinal(word: str) -> int:
    """``first`` / 一 / ``1`` → 1."""
    word = word.strip().lower()
    return int(word) if word.isdigit() else ORDINALS[word]
