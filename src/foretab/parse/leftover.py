"""Refuse a question part that no pass consumed (docs/design.md §2, issue 10 item 4).

After the entity, time, measure, cue and filler passes, a word nobody claimed is a part of
the question the plan does not express ("median", "resale", "in US dollars", "二手房",
"中位数"): answering anyway would answer another question, so the question is refused,
naming that part and what foretab can answer.
"""

from __future__ import annotations

import re

from foretab.errors import QuestionError
from foretab.parse.claims import Claims
from foretab.parse.lexicon import Lexicon, default_lexicon
from foretab.parse.question import Question, Segment
from foretab.parse.text import CJK
from foretab.parse.vocabulary import FILLER_ZH

_CJK_WORD = re.compile(f"[{CJK}]{{2,}}")
_EN_WORD = re.compile(r"[a-z]{3,}")
_NUMBER_ZH = re.compile(r"[一二两三四五六七八九十百千万几]+个?")


def unclaimed(question: Question, claims: Claims) -> tuple[Segment, ...]:
    """The question's words that no pass claimed and that could carry meaning.

    Single Chinese characters (的, 吗, 在), numbers and short English tokens are function
    words or parts of numbers. A Chinese word partly claimed ("哪个", "最低水平") is read
    when what is left of it is filler; "二手房" (房 claimed by 房价) is not.
    """
    if not question.zh:
        return tuple(
            s
            for s in question.segments
            if _EN_WORD.fullmatch(s.text.lower())
            and not claims.covers(s.start, _without_possessive(question.text, s))
        )
    return tuple(
        s
        for s in question.segments
        if _CJK_WORD.fullmatch(s.text)
        and not _NUMBER_ZH.fullmatch(s.text)
        and any(part not in FILLER_ZH for part in _left_parts(s, claims))
    )


def _without_possessive(text: str, word: Segment) -> int:
    """Where ``word`` ends without a possessive "'s" ("today's" is read as "today")."""
    return word.end - 2 if text[word.end - 2 : word.end].lower() in ("'s", "’s") else word.end


def _left_parts(segment: Segment, claims: Claims) -> list[str]:
    """The runs of a segment's characters that no claim covers."""
    parts, run = [], ""
    for i, char in enumerate(segment.text):
        at = segment.start + i
        if claims.covers(at, at + 1):
            if run:
                parts.append(run)
            run = ""
        else:
            run += char
    if run:
        parts.append(run)
    # A single leftover character of a longer, partly claimed word is its ending (个, 值).
    if len(segment.text) > 1 and len("".join(parts)) < len(segment.text):
        parts = [p for p in parts if len(p) > 1]
    return parts


def refuse_unclaimed(question: Question, claims: Claims, lexicon: Lexicon | None = None) -> None:
    """Raise ``QuestionError`` naming the first run of unclaimed words, if any."""
    left = unclaimed(question, claims)
    if not left:
        return
    lexicon = lexicon or default_lexicon()
    # The run of neighbouring unclaimed words around the first one ("US dollars").
    first = left[0]
    end = first.end
    for s in left[1:]:
        if question.text[end : s.start].strip(" -"):
            break
        end = s.end
    start = first.start
    # "second-hand": the hyphenated word whole, though its first half is a question word
    joined = re.search(r"[A-Za-z]+-$", question.text[:start])
    if joined and not question.zh:
        start = joined.start()
    part = question.text[start:end]
    if question.zh:
        raise QuestionError(
            f"问题中的“{part}”不是 foretab 能理解的内容（不是项目、地区、时间、指标或问法），"
            f"按它回答会答成另一个问题；请去掉它后再问。{lexicon.can_answer_zh}"
        )
    raise QuestionError(
        f"the question's '{part}' is not something foretab reads (not a "
        f"{lexicon.wording.entity}, place, time, measure or question word), and answering "
        "without it would answer another "
        f"question; ask without it — {lexicon.can_answer}"
    )
