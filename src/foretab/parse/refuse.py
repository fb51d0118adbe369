"""Questions the engine must refuse rather than answer as a different question (docs/design.md §2).

Read on the question with its entities and time expression masked out, so a place called
"Pudong New Area" or a project called "Rent Garden" is not a refused word. Each refusal
names the part that cannot be answered and what can be asked instead.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from foretab.errors import QuestionError

if TYPE_CHECKING:
    from foretab.parse.lexicon import Lexicon


_WHY_EN = re.compile(
    r"\bwhy\b|\bexplain\w*\b|\breasons?\b|\bcauses?\b|\bcaused\b|\bwhat\s+drove\b"
    r"|\bwhat\s+(?:is|was)\s+behind\b|\bhow\s+come\b|\bdescribe\b|\banaly[sz]e\b|\bthoughts\b"
)
_WHY_ZH = re.compile(r"为什么|为何|原因|怎么会|解释|分析一下|分析下|导致")
# A second question after the first: "…, and who built it?", "… and what will it be …?"
_SECOND_EN = re.compile(
    r"\band\s+(?:also\s+)?(?:who|what|how|which|when|where|why)\b"
    r"|,\s*(?:and|also|plus)\s+(?:is|are|will|does|did|was|were|can|could)\b"
)
# The first part is a question itself ("On average, what did ..." has none before ", what").
_ASKS = re.compile(
    r"\b(?:what|which|how|who|when|where|will|is|are|does|did|was|were|can|could|tell|give"
    r"|list|show)\b"
)


def check_refusals(text: str, *, zh: bool, lexicon: Lexicon | None = None) -> None:
    """Refuse what cannot be answered, naming the cause (``text``: entities/time masked)."""
    from foretab.parse.lexicon import default_lexicon

    lexicon = lexicon or default_lexicon()
    can_answer, can_answer_zh = lexicon.can_answer, lexicon.can_answer_zh
    lowered = text.lower()
    second = None if zh else _SECOND_EN.search(lowered)
    if second and not (
        _ASKS.search(lowered[: second.start()]) and _clause_asks(lowered, second.end())
    ):
        second = None
    if second:
        raise QuestionError(
            "the question holds two questions"
            + (f" (the second starts at '{second.group().strip()}')" if second else "")
            + "; ask them one at a time"
        )
    # Measures and facts the store does not hold: the corpus schema's refusals.
    for pattern, what in lexicon.refusals_zh if zh else lexicon.refusals_en:
        match = pattern.search(lowered)
        if match:
            raise QuestionError(
                (
                    f"这个问题问的是{what}（“{match.group()}”），数据中没有这一项；{can_answer_zh}"
                    if zh
                    else f"the question asks for the {what} ('{match.group()}'), which the "
                    f"store does not hold; {can_answer}"
                ),
                suggestions=(lexicon.example,),
            )
    why = (_WHY_ZH if zh else _WHY_EN).search(lowered)
    if why:
        word = why.group()
        raise QuestionError(
            f"这个问题要求解释原因（“{word}”）；foretab 只报告数值，不解释原因；{can_answer_zh}"
            if zh
            else f"the question asks to explain or give reasons ('{word}'); foretab "
            f"reports values, not causes — ask for the values instead ({can_answer})"
        )


def _clause_asks(text: str, at: int) -> bool:
    """True when the words after a conjunction form a question of their own."""
    rest = text[at:].strip()
    return bool(rest) and len(rest.split()) >= 2
