"""``HybridEngine``: rules first; the TimeFore agents for what the rules cannot plan."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from foretab.core.answer import Answer
from foretab.core.trace import PlanStep
from foretab.engine.core import Engine, timed
from foretab.errors import QuestionError
from foretab.limits import check_question

if TYPE_CHECKING:
    from sqlglot import exp

    from foretab.converse import Conversation
    from foretab.core.stages import FutureSource
    from foretab.engine.context import StoreContext
    from foretab.engine.llm import LLMEngine
    from foretab.sql.guard import GuardedExecutor
    from foretab.sql.result import QueryResult
    from foretab.store import HistoryStore
    from foretab.timefore.session import AgentSession


class HybridEngine:
    """Rules first; the TimeFore agents (built on first need) for what the rules cannot plan.

    An unknown or ambiguous entity stays the rules' error, and a question the rules plan is
    answered from that plan (parsed once), sending no LLM request.
    """

    kind = "hybrid"

    def __init__(self, rules: Engine, agents: Callable[[], LLMEngine]) -> None:
        self.rules = rules
        self._make_agents = agents
        self._agents: LLMEngine | None = None
        self.last_engine = "rules"

    @property
    def agents(self) -> LLMEngine:
        if self._agents is None:
            self._agents = self._make_agents()
        return self._agents

    @property
    def context(self) -> StoreContext:
        return self.rules.context

    @property
    def store(self) -> HistoryStore:
        return self.rules.store

    @property
    def guard(self) -> GuardedExecutor:
        return self.rules.guard

    @property
    def future(self) -> FutureSource:
        return self.rules.future

    @property
    def llm_session(self) -> AgentSession | None:
        if self.last_engine != "timefore" or self._agents is None:
            return None
        return self._agents.llm_session

    def sql(self, sql: str | exp.Expression, params: Sequence[Any] | None = None) -> QueryResult:
        """SQL through the rules engine's guard (``Engine.sql``)."""
        return self.rules.sql(sql, params)

    def ask(self, question: str) -> Answer:
        from foretab.timefore.planner import is_entity_error

        check_question(question)
        try:
            plan, seconds = timed(lambda: self.rules.planner.plan(question))
        except QuestionError as error:
            if is_entity_error(error):
                raise
            self.last_engine = "timefore"
            return self.agents.ask(question)
        self.last_engine = "rules"
        steps = [PlanStep(self.rules.planner.name, seconds)]
        return self.rules.answer(question, self.rules.checked(plan), steps)

    def conversation(self) -> Conversation:
        """A conversation: questions of their own as ``ask`` answers them, follow-ups by the rules."""
        from foretab.converse import Conversation

        return Conversation(self)

    def close(self) -> None:
        self.rules.close()
        if self._agents is not None:
            self._agents.close()

    def __enter__(self) -> HybridEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
