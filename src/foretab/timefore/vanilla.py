"""The paper's Vanilla baseline (§5): BM25 captions, a five-shot prompt, the LLM predicts.

No LLM retrieval and no forecasting tool: BM25 over the catalog captions with the question
as the query finds the district (its tables for the 24 months up to R, or the months a
history question asks about), foretab reads the named projects' prices from them through
the guard, and one five-shot prompt asks the LLM for the answer — future values included.
"""

from __future__ import annotations

from collections.abc import Sequence

from foretab.core.catalog import CaptionMatch, CatalogEntry, Retrieval
from foretab.core.plan import EntityRef, Plan
from foretab.core.series import Forecast, History
from foretab.core.stages import Analysis, HistoryRead
from foretab.llm import ChatMessage
from foretab.read import GuardedHistoryReader
from foretab.retrieve import history_span
from foretab.retrieve.bm25 import tokenize
from foretab.sql.guard import GuardedExecutor
from foretab.timefore.analyzer import answer_text, rounded
from foretab.timefore.captions import CaptionSearch
from foretab.timefore.errors import AgentError
from foretab.timefore.examples import Example, pick
from foretab.timefore.extract import extract_answer
from foretab.timefore.prompts import future_rows, history_rows, numbered, render
from foretab.timefore.session import AgentSession, Conversation, ask_until


class BM25Captions:
    """The district BM25 ranks first for the question; its tables in the history span."""

    name = "vanilla.bm25"

    def __init__(self, catalog: Sequence[CatalogEntry]) -> None:
        self.catalog = list(catalog)
        self.search = CaptionSearch(self.catalog)

    def retrieve(self, plan: Plan) -> Retrieval:
        hits = self.search.search(plan.question, k=1)
        if not hits:
            raise AgentError(
                "BM25 found no table caption sharing a word with the question; name the "
                "district and city (see `foretab tables --db DB`)"
            )
        top = hits[0][0]
        first, last = history_span(plan)
        tables = [
            e
            for e in self.catalog
            if (e.outer, e.inner) == (top.outer, top.inner) and first.year <= e.year <= last.year
        ]
        return Retrieval(tuple(CaptionMatch(e.caption, "bm25", e) for e in tables))


class MentionedProjectsReader:
    """The plan's projects, else the retrieved district's projects the question names."""

    name = "vanilla.read"

    def __init__(self, guard: GuardedExecutor, projects: Sequence[EntityRef]) -> None:
        self.reader = GuardedHistoryReader(guard)
        self.projects = list(projects)

    def read(self, plan: Plan, retrieval: Retrieval) -> HistoryRead:
        if not plan.entities:
            places = {(t.outer, t.inner) for t in retrieval.tables}
            words = " ".join(tokenize(plan.question))
            named = tuple(
                ref
                for ref in self.projects
                if (ref.outer, ref.inner) in places
                and f" {' '.join(tokenize(ref.name))} " in f" {words} "
            )
            if not named:
                raise AgentError(
                    "the question names no project of the district BM25 found; name the "
                    "project as the catalog does"
                )
            plan = Plan(
                plan.question, plan.reference_month, named, plan.window,
                plan.aggregate, plan.task, plan.comparison, plan.measure,
            )  # fmt: skip
        return self.reader.read(plan, retrieval)


class LLMPredicts:
    """The future source of the baseline: none — the LLM predicts inside its answer."""

    name = "vanilla.llm-predicts"

    def forecast(self, plan: Plan, history: History) -> Forecast:
        del plan, history
        return Forecast(self.name)


class VanillaAnalyzer:
    """One five-shot prompt with the history; the LLM's own answer, parsed."""

    name = "vanilla.analyzer"

    def __init__(
        self, session: AgentSession, examples: Sequence[Example], *, retries: int = 2
    ) -> None:
        self.session = session
        self.examples = pick(examples)
        self.retries = retries

    def take_steps(self) -> tuple:
        return self.session.take_steps()

    def analyze(self, plan: Plan, history: History, forecast: Forecast) -> Analysis:
        del forecast
        refs = plan.entities or tuple(history)
        blocks = []
        for e in self.examples:
            future = f"\n(the actual future prices were {future_rows(e.forecast, e.projects)})"
            blocks.append(
                f"<Query>:{e.question}\n<History Price>:{history_rows(e.history, e.projects)}"
                f"{future if e.forecast else ''}\n<Answer>:{e.answer_list!r}"
            )
        prompt = render(
            "vanilla", plan.reference_month, examples=numbered(blocks),
            query=plan.question, history_price=history_rows(history, refs),
        )  # fmt: skip
        answer, _ = ask_until(
            self.session, self.name, Conversation([ChatMessage.user(prompt)]),
            purpose="answer (vanilla)",
            parse=lambda text: extract_answer(text, ("<Answer>",)),
            reminder="Output only the answer list, e.g. [[12345.67]] or [['Increase']].",
            retries=self.retries,
        )  # fmt: skip
        assert isinstance(answer, list)
        answer = rounded(answer)
        return Analysis(answer, answer_text(answer, "Vanilla LLM", plan.question))
