"""``LLMEngine``: an ``Engine`` whose stages talk to an LLM."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from foretab.core.answer import Answer, step_doc
from foretab.engine.context import StoreSession
from foretab.engine.core import Engine, Stages
from foretab.errors import ForetabError

if TYPE_CHECKING:
    from foretab.timefore.session import AgentSession, LLMUsage


class LLMEngine(Engine):
    """An ``Engine`` whose stages talk to an LLM: failures carry the LLM steps so far.

    Whatever a model sends, the question ends in a ``ForetabError``: an unexpected
    exception inside an agent becomes an ``AgentError`` naming it (the cause is chained).
    """

    def __init__(
        self, session: StoreSession, stages: Stages, llm_session: AgentSession, *, kind: str
    ) -> None:
        super().__init__(session, stages, kind=kind)
        self.llm_session = llm_session

    def ask(self, question: str) -> Answer:
        from foretab.timefore.errors import AgentError

        try:
            answer = super().ask(question)
            return _opened(answer, self.analyzer)
        except ForetabError as error:
            failure: ForetabError = error
        except Exception as error:
            failure = AgentError(
                f"the {self.kind} engine failed on the LLM's output ({type(error).__name__}: "
                f"{error}); see the steps in `foretab ask ... --json`"
            )
            failure.__cause__ = error
        failure.steps = [  # type: ignore[attr-defined]
            step_doc(s).model_dump(mode="json") for s in self.llm_session.question_steps
        ]
        raise failure


def _opened(answer: Answer, analyzer: object) -> Answer:
    """An open plan's answer reports the question type the classifier chose."""
    from foretab.timefore.planner import is_open

    if not is_open(answer.plan):
        return answer
    task = getattr(analyzer, "last_type", None) or answer.task
    return replace(answer, plan=replace(answer.plan, task=task), task=task)


def last_usage(engine: object) -> LLMUsage | None:
    """LLM calls, tokens and seconds of the engine's last question (None: no LLM used)."""
    session = getattr(engine, "llm_session", None)
    return None if session is None else session.usage
