"""Plans for the LLM engines: the rules' plan when they can, else an *open* plan.

An open plan carries what needs no question-family parsing: the question, the reference
month, the projects the entity linker finds in it, and the Forecaster's fixed horizon (the
12 months after R, as in the paper); the Analyzer's classifier finds the type. Unknown or
ambiguous entities are never opened up: they stay the rules' clear errors, and so does a
question that names no project.
"""

from __future__ import annotations

from foretab.core.plan import Aggregate, Plan, Task, TimeWindow
from foretab.core.stages import Planner
from foretab.errors import AmbiguousEntityError, QuestionError, UnknownEntityError
from foretab.timefore.prompts import HORIZON
from foretab.timefore.session import AgentSession

OPEN_EXPRESSION = "(open plan: the LLM agents read the question; 12 months after R forecast)"


def is_entity_error(error: QuestionError) -> bool:
    """Unknown / ambiguous entities: errors in every engine, never opened up."""
    return isinstance(error, UnknownEntityError | AmbiguousEntityError)


def is_open(plan: Plan) -> bool:
    """Whether ``plan`` is an open plan (the rules could not plan the question)."""
    return plan.window.expression == OPEN_EXPRESSION


def open_plan(question: str, planner: Planner, refused: QuestionError) -> Plan:
    """The linked projects and the Forecaster's horizon; the agents do the rest."""
    reference = planner.reference  # type: ignore[attr-defined]
    index = getattr(planner, "index", None)
    projects = index.link(question).entities if index is not None else ()
    if not projects:
        raise QuestionError(
            f"{refused.message}; the LLM agents also need a project named as in the catalog "
            "(see `foretab projects --db DB`)",
            suggestions=refused.suggestions,
        )
    return Plan(
        question=question,
        reference_month=reference,
        entities=tuple(projects),
        window=TimeWindow(reference + 1, reference + HORIZON, OPEN_EXPRESSION),
        aggregate=Aggregate.EACH,
        task=Task.FORECAST,
    )


class AgentPlanner:
    """Starts the question's LLM session, then plans by rules or opens the plan."""

    def __init__(self, rules: Planner, session: AgentSession) -> None:
        self.rules = rules
        self.session = session
        self.name = "rules"
        self.reference = rules.reference  # type: ignore[attr-defined]

    def take_steps(self) -> tuple:
        return self.session.take_steps()

    def plan(self, question: str) -> Plan:
        self.session.begin()
        try:
            plan = self.rules.plan(question)
            self.name = "rules"
            return plan
        except QuestionError as error:
            if is_entity_error(error):
                raise
            self.name = "open"
            return open_plan(question, self.rules, error)
