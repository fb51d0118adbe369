"""The Analyzer agent: question type → one few-shot prompt per type → normalised answer.

The type (forecasting, forecast-based reasoning, history) is the planner's task when the
rules planned the question, else a small classifier trained on the few-shot source's
questions (the benchmark train split, or the shipped examples). Numeric answers go
through the paper's numerical-extraction normaliser (a second LLM call); every answer is
then parsed into the ODTQA-FoRe list format, asking again (bounded) when it is unusable.
"""

from __future__ import annotations

from collections.abc import Sequence

from foretab.core.plan import Plan, Task
from foretab.core.series import Forecast, History
from foretab.core.stages import Analysis
from foretab.llm import ChatMessage
from foretab.parse.text import has_cjk
from foretab.timefore.errors import AgentError
from foretab.timefore.examples import Example, pick
from foretab.timefore.extract import Cell, clean, extract_answer
from foretab.timefore.prompts import current_rows, future_rows, history_rows, numbered, render
from foretab.timefore.session import AgentSession, Conversation, ask_until

_ANSWER_LABELS = ("<Answer>",)
_NORMALISED_LABELS = ("<Normalized Answer>", "<Normalizied Answer>", "<Normalised Answer>")
_REMINDER = "Output only the answer list, e.g. [[12345.67]] or [['Increase']]."


class QuestionTypeClassifier:
    """Word n-gram TF-IDF + logistic regression: question text → ``Task``."""

    def __init__(self, questions: Sequence[str], tasks: Sequence[Task]) -> None:
        from foretab.extras import require

        require("sklearn", "llm")
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression

        labels = sorted({t.value for t in tasks})
        if len(labels) < 2:
            raise AgentError(
                "the question-type classifier needs examples of at least two question types; "
                "pass a train split with --fewshot DIR/train.jsonl"
            )
        self._vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)
        features = self._vectorizer.fit_transform(list(questions))
        self._model = LogisticRegression(max_iter=1000, C=10.0)
        self._model.fit(features, [t.value for t in tasks])

    def predict(self, question: str) -> Task:
        return Task(str(self._model.predict(self._vectorizer.transform([question]))[0]))


def rounded(answer: list[list[Cell]]) -> list[list[Cell]]:
    """Every number of ``answer`` to 2 decimals (the answer format, docs/design.md §4)."""
    return [[round(c, 2) if isinstance(c, float) else c for c in row] for row in answer]


def answer_text(answer: list[list[Cell]], engine: str, question: str = "") -> str:
    """One sentence stating the answer, in the question's language (the LLM chose it)."""
    parts = [
        " ".join(f"{c:,.2f}" if isinstance(c, float) else str(c) for c in row) for row in answer
    ]
    if has_cjk(question):
        return f"{engine} 的回答：" + "；".join(parts) + "。"
    return f"The {engine} answer is " + "; ".join(parts) + "."


class LLMAnalyzer:
    """The TimeFore Analyzer (an ``Analyzer``)."""

    name = "timefore.analyzer"

    def __init__(
        self,
        session: AgentSession,
        examples: Sequence[Example],
        classifier: QuestionTypeClassifier,
        *,
        retries: int = 2,
    ) -> None:
        self.session = session
        self.examples = list(examples)
        self.classifier = classifier
        self.retries = retries
        #: the type of the last question analysed (an open plan's answer reports it)
        self.last_type: Task | None = None

    def take_steps(self) -> tuple:
        return self.session.take_steps()

    def question_type(self, plan: Plan) -> Task:
        from foretab.timefore.planner import is_open

        # A rules plan knows its task; an open plan (the rules could not plan it) asks the model.
        return self.classifier.predict(plan.question) if is_open(plan) else plan.task

    def _prompt(self, task: Task, plan: Plan, history: History, forecast: Forecast) -> str:
        refs = plan.entities or tuple(history)
        shots = pick(self.examples, task=task)
        if task is Task.HISTORY:
            blocks = [
                f"<Query>:{e.question}\n<History Price>:{history_rows(e.history, e.projects)}\n"
                f"<Answer>:{e.answer_list!r}"
                for e in shots
            ]
            return render(
                "analyzer_history", plan.reference_month, examples=numbered(blocks),
                query=plan.question, history_price=history_rows(history, refs),
            )  # fmt: skip
        if task is Task.REASONING:
            blocks = [
                f"<Query>:{e.question}\n<History Price>:{history_rows(e.history, e.projects)}\n"
                f"<Current Price>:{_current(e)}\n"
                f"<Future Price>:{future_rows(e.forecast, e.projects)}\n<Answer>:{e.answer_list!r}"
                for e in shots
            ]
            return render(
                "analyzer_reasoning", plan.reference_month, examples=numbered(blocks),
                query=plan.question, history_price=history_rows(history, refs),
                current_price=current_rows(plan, history, refs),
                future_price=future_rows(forecast, refs),
            )  # fmt: skip
        blocks = [
            f"<Query>:{e.question}\n<History Price>:{history_rows(e.history, e.projects)}\n"
            f"<Future Price>:{future_rows(e.forecast, e.projects)}\n<Answer>:{e.answer_list!r}"
            for e in shots
        ]
        return render(
            "analyzer_forecast", plan.reference_month, examples=numbered(blocks),
            query=plan.question, history_price=history_rows(history, refs),
            future_price=future_rows(forecast, refs),
        )  # fmt: skip

    def _normalise(self, plan: Plan, predicted: str) -> list[list[Cell]]:
        shots = [e for e in self.examples if e.task is not Task.REASONING][:5]
        blocks = [
            f"<Query>:{e.question}\n<Predicted Answer>:{e.answer_list!r}\nExplanation: "
            f"this is the {'highest' if i % 2 else 'requested'} value from the forecast.\n"
            f"<Normalized Answer>:{e.answer_list!r}"
            for i, e in enumerate(shots)
        ]
        prompt = render(
            "normalise", plan.reference_month, examples=numbered(blocks),
            query=plan.question, predicted=predicted,
        )  # fmt: skip
        answer, _ = ask_until(
            self.session, self.name, Conversation([ChatMessage.user(prompt)]),
            purpose="normalise answer",
            parse=lambda text: extract_answer(text, _NORMALISED_LABELS),
            reminder=_REMINDER, retries=self.retries,
        )  # fmt: skip
        assert isinstance(answer, list)
        return answer

    def analyze(self, plan: Plan, history: History, forecast: Forecast) -> Analysis:
        task = self.question_type(plan)
        self.last_type = task
        prompt = self._prompt(task, plan, history, forecast)
        conversation = Conversation([ChatMessage.user(prompt)])
        if task is Task.REASONING:
            answer, _ = ask_until(
                self.session, self.name, conversation, purpose=f"answer ({task.value})",
                parse=lambda text: extract_answer(text, _ANSWER_LABELS),
                reminder=_REMINDER, retries=self.retries,
            )  # fmt: skip
        else:
            predicted, _ = ask_until(
                self.session, self.name, conversation, purpose=f"answer ({task.value})",
                parse=lambda text: clean(text) or None, reminder=_REMINDER, retries=self.retries,
            )  # fmt: skip
            answer = self._normalise(plan, str(predicted))
        assert isinstance(answer, list)
        answer = rounded(answer)
        return Analysis(answer, answer_text(answer, "TimeFore", plan.question))


def _current(example: Example) -> str:
    from foretab.core.plan import Aggregate, TimeWindow

    if example.history is None or not example.projects:
        return "[]"
    reference = example.reference
    plan = Plan(
        example.question, reference, example.projects,
        TimeWindow(reference, reference), Aggregate.VALUE, example.task,
    )  # fmt: skip
    return current_rows(plan, example.history, example.projects)
