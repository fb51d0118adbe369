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
from typing import TYPE_CHECKING, Protocol

from foretab.converse.clarify import Clarify, clarify_question, full_question
from foretab.converse.reading import StoreWords, words_of
from foretab.converse.resolve import is_follow_up, resolve_follow_up
from foretab.converse.words import ordinal
from foretab.core.answer import Answer
from foretab.core.canonical import canonical
from foretab.core.plan import Language, Plan
from foretab.core.trace import PlanStep
from foretab.errors import AmbiguousEntityError, QuestionError
from foretab.limits import check_question
from foretab.parse.entities import MentionKind
from foretab.parse.question import is_chinese
from foretab.parse.text import has_cjk

if TYPE_CHECKING:
    from foretab.engine.core import Engine


class Answering(Protocol):
    """What a conversation needs of its engine: ``Engine``, or ``HybridEngine`` (``.rules``)."""

    def ask(self, question: str) -> Answer: ...


#: turns a conversation keeps (older ones are dropped: follow-ups read the recent thread)
MAX_TURNS = 50


@dataclass(frozen=True, slots=True)
class Turn:
    """One exchange: what was said and either its plan (and answer) or a clarifying choice."""

    said: str
    plan: Plan | None = None
    #: None for a clarify, and for a turn replayed from a stored conversation (planned only)
    answer: Answer | None = None
    clarify: Clarify | None = None
    #: the plan as one full question, each named entity with its place ("" for a clarify)
    asked: str = ""

    @property
    def canonical(self) -> str:
        """The question this turn answered, in full ("" for a clarify)."""
        return canonical(self.plan) if self.plan is not None else ""


class Conversation:
    """Questions and follow-ups over one engine; ``engine.conversation()`` makes one.

    ``engine`` answers the questions of their own (``ask``: a hybrid engine keeps its
    LLM fallback); follow-ups and choices are planned by the rules over the same store and
    answered from that plan (a hybrid engine's rules engine; an LLM engine's own stages,
    which read the resolved question as their query).
    """

    def __init__(
        self, engine: Answering, *, max_turns: int = MAX_TURNS, id: str | None = None
    ) -> None:
        if max_turns < 1:
            raise ValueError("a conversation keeps at least one turn")
        self.engine = engine
        self._planner: Engine = getattr(engine, "rules", engine)
        self.id = id or secrets.token_urlsafe(16)
        self.turns: deque[Turn] = deque(maxlen=max_turns)
        context = self._planner.context
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
        planned = self._plan(text)
        if planned is None:
            try:
                answer = self.engine.ask(text)
            except AmbiguousEntityError as error:
                turn = Turn(text, clarify=self._clarify(text, error))
            else:
                turn = self._answered(text, answer.plan, answer)
        elif isinstance(planned, Clarify):
            turn = Turn(text, clarify=planned)
        else:
            plan = self._planner.checked(planned)
            answer = self._planner.answer(text, plan, [PlanStep("conversation", 0.0)])
            turn = self._answered(text, plan, answer)
        self.turns.append(turn)
        return turn

    def replay(self, said: list[str]) -> None:
        """Rebuild the thread from the texts of earlier turns: planned again, not answered.

        A turn that no longer plans (the store was re-ingested since) is left out.
        """
        for text in said:
            try:
                planned = self._plan(text)
                if planned is None:
                    try:
                        planned = self._planner.parse(text)
                    except AmbiguousEntityError as error:
                        planned = self._clarify(text, error)
            except QuestionError:
                continue
            if isinstance(planned, Clarify):
                self.turns.append(Turn(text, clarify=planned))
            else:
                self.turns.append(Turn(text, self._planner.checked(planned)))

    def _answered(self, text: str, plan: Plan, answer: Answer) -> Turn:
        return Turn(text, plan, answer, asked=full_question(plan, self._words.index))

    def _plan(self, text: str) -> Plan | Clarify | None:
        """A choice's or a follow-up's plan (or clarify); None: a question of its own."""
        pending = self.pending
        if pending is not None:
            picked = self._pick(pending, text)
            if picked is not None:
                return picked
        if not is_follow_up(text, in_conversation=bool(self.turns)):
            return None
        try:
            return resolve_follow_up(self.plans, text, self._words)
        except AmbiguousEntityError as error:
            raise QuestionError(error.message, suggestions=error.suggestions) from None

    def _by_place(self, pending: Clarify, text: str) -> Plan | None:
        """The one choice in the place the text names ("the one in Suzhou", 吴江那个), if one."""
        index = self._words.index
        places: set[tuple[str, str | None]] = set()
        for mention in index.find_mentions(text):
            if mention.kind is MentionKind.OUTER:
                places.update((index.outers[i], None) for i in mention.ids)
            elif mention.kind is MentionKind.INNER:
                places.update(index.inners[i] for i in mention.ids)
        if not places:
            return None
        fits = [
            choice.plan
            for choice in pending.choices
            if choice.plan.entities
            and all(
                (ref.outer, None) in places or (ref.outer, ref.inner) in places
                for ref in choice.plan.entities
            )
        ]
        return fits[0] if len(fits) == 1 else None

    def _clarify(self, text: str, error: AmbiguousEntityError) -> Clarify:
        language = Language.ZH if is_chinese(text) else Language.EN
        return clarify_question(text, error, language, self._words.index, self._planner.parse)

    def _pick(self, pending: Clarify, text: str) -> Plan | None:
        same = pending.matching(text)
        if same is not None:
            return same
        by_place = self._by_place(pending, text)
        if by_place is not None:
            return by_place
        words = words_of(has_cjk(text))
        if words.both.search(text):
            return pending.every()
        choice = words.choice.search(text)
        if choice:
            return pending.pick(ordinal(choice.group("n") or choice.groupdict().get("d") or ""))
        return None
