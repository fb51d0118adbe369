"""``Conversation``: a bounded list of turns over one engine (docs/design.md §4.3).

Each ``ask`` is one turn: a pick of a pending clarify's choice, a follow-up resolved against
the thread's plans (``converse.resolve``), or a question of its own. A name that is several
entities gives a ``Clarify`` turn instead of an error. Every answered turn's plan is shown
as its canonical question (``Answer.to_doc().canonical``), so the user sees what was asked.
"""

from __future__ import annotations

import secrets
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING

from foretab.converse.clarify import Clarify, clarify_question, full_question
from foretab.converse.reading import StoreWords, words_of
from foretab.converse.resolve import is_follow_up, resolve_follow_up
from foretab.converse.words import ordinal
from foretab.core.answer import Answer
from foretab.core.canonical import canonical
from foretab.core.plan import Language, Plan
from foretab.core.trace import PlanStep
from foretab.errors import QuestionError
from foretab.limits import check_question
from foretab.parse.entities import AmbiguousNameError
from foretab.parse.question import is_chinese
from foretab.parse.text import has_cjk

if TYPE_CHECKING:
    from foretab.engine.core import Engine

#: turns a conversation keeps (older ones are dropped: follow-ups read the recent thread)
MAX_TURNS = 50


@dataclass(frozen=True, slots=True)
class Turn:
    """One exchange: what was said and either its answer or a clarifying choice."""

    said: str
    answer: Answer | None = None
    clarify: Clarify | None = None
    #: the plan as one full question, each named entity with its place ("" for a clarify)
    asked: str = ""

    @property
    def plan(self) -> Plan | None:
        return self.answer.plan if self.answer is not None else None

    @property
    def canonical(self) -> str:
        """The question this turn answered, in full ("" for a clarify)."""
        return canonical(self.answer.plan) if self.answer is not None else ""


class Conversation:
    """Questions and follow-ups over one engine; ``engine.conversation()`` makes one."""

    def __init__(self, engine: Engine, *, max_turns: int = MAX_TURNS, id: str | None = None) -> None:
        if max_turns < 1:
            raise ValueError("a conversation keeps at least one turn")
        self.engine = engine
        self.id = id or secrets.token_urlsafe(16)
        self.turns: deque[Turn] = deque(maxlen=max_turns)
        context = engine.context
        self._words = StoreWords(context.index, context.lexicon, context.reference)

    @property
    def plans(self) -> list[Plan]:
        """The answered turns' plans, oldest first."""
        return [t.plan for t in self.turns if t.plan is not None]

    @property
    def pending(self) -> Clarify | None:
        """The clarify the last turn asked, until a choice (or anything else) follows it."""
        return self.turns[-1].clarify if self.turns else None

    def ask(self, text: str) -> Turn:
        """Answer one turn; raises ``ForetabError`` naming the problem (the thread is kept)."""
        check_question(text)
        plan_or_clarify = self._plan(text)
        if isinstance(plan_or_clarify, Clarify):
            turn = Turn(text, clarify=plan_or_clarify)
        else:
            plan = self.engine.checked(plan_or_clarify)
            answer = self.engine.answer(text, plan, [PlanStep("conversation", 0.0)])
            turn = Turn(text, answer=answer, asked=full_question(plan, self._words.index))
        self.turns.append(turn)
        return turn

    def _plan(self, text: str) -> Plan | Clarify:
        pending = self.pending
        if pending is not None:
            picked = self._pick(pending, text)
            if picked is not None:
                return picked
        if is_follow_up(text):
            try:
                return resolve_follow_up(self.plans, text, self._words)
            except AmbiguousNameError as error:
                raise QuestionError(error.message, suggestions=error.suggestions) from None
        try:
            return self.engine.parse(text)
        except AmbiguousNameError as error:
            language = Language.ZH if is_chinese(text) else Language.EN
            return clarify_question(text, error, language, self._words.index, self.engine.parse)

    @staticmethod
    def _pick(pending: Clarify, text: str) -> Plan | None:
        same = pending.matching(text)
        if same is not None:
            return same
        words = words_of(has_cjk(text))
        if words.both.search(text):
            return pending.every()
        choice = words.choice.search(text)
        if choice:
            return pending.pick(ordinal(choice.group("n") or choice.groupdict().get("d") or ""))
        return None
