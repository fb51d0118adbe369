"""``TableQA``: the LyS PRESTA pipeline, in the paper's four ablation settings.

Column selector, answer generator, sandboxed execution, code fixer.

    from foretab.llm import load_options, make_provider
    from foretab.tableqa import TableQA

    qa = TableQA(make_provider(load_options(base_url=URL, model=M)), pipeline="ag+ecs+cf")
    result = qa.ask(df, "Is our average employee older than 35?")
    result.answer.text, result.answer.type, result.code
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Literal

from foretab.errors import ForetabError
from foretab.llm import CallBudget, ChatMessage, LLMCall, LLMError, LLMProvider
from foretab.tableqa import prompts
from foretab.tableqa.answer import AnswerType, TypedAnswer, normalise
from foretab.tableqa.extract import extract_code, parse_column_list
from foretab.tableqa.preprocess import ColumnInfo, TableProfile, prepare
from foretab.tableqa.sandbox import SandboxFailure, SandboxLimits, run_code

if TYPE_CHECKING:
    import pandas as pd


class Pipeline(StrEnum):
    """The paper's Table 2 settings."""

    AG = "ag"
    AG_CS = "ag+cs"
    AG_ECS = "ag+ecs"
    AG_ECS_CF = "ag+ecs+cf"

    @property
    def selects_columns(self) -> bool:
        return self is not Pipeline.AG

    @property
    def enhanced(self) -> bool:
        return self in (Pipeline.AG_ECS, Pipeline.AG_ECS_CF)

    @property
    def fixes_code(self) -> bool:
        return self is Pipeline.AG_ECS_CF


class TableQAError(ForetabError):
    """No answer: every attempt failed, or the LLM could not be used."""

    def __init__(self, message: str, result: TableQAResult | None = None) -> None:
        super().__init__(message)
        self.result = result

    def to_dict(self) -> dict[str, object]:
        data = super().to_dict()
        if self.result is not None:
            data["attempts"] = [a.to_dict() for a in self.result.attempts]
            data["code"] = self.result.code
        return data


@dataclass(frozen=True, slots=True)
class Attempt:
    """One generated (or fixed) program and what running it gave."""

    stage: Literal["generate", "fix"]
    code: str | None
    ok: bool
    value: object = None
    failure: SandboxFailure | None = None
    elapsed_s: float = 0.0

    def to_dict(self) -> dict[str, object]:
        return {
            "stage": self.stage,
            "code": self.code,
            "ok": self.ok,
            "value": self.value,
            "error": None if self.failure is None else self.failure.model_dump(),
            "seconds": round(self.elapsed_s, 3),
        }


@dataclass(frozen=True, slots=True)
class Timings:
    """Wall seconds per stage."""

    select_s: float = 0.0
    generate_s: float = 0.0
    execute_s: float = 0.0
    total_s: float = 0.0

    def to_dict(self) -> dict[str, float]:
        return {
            k: round(getattr(self, k), 3)
            for k in ("select_s", "generate_s", "execute_s", "total_s")
        }


@dataclass(frozen=True, slots=True)
class TableQAResult:
    """Everything one question produced; ``answer`` is ``None`` when it failed (see ``error``)."""

    question: str
    pipeline: Pipeline
    answer: TypedAnswer | None
    code: str | None
    columns: tuple[str, ...]
    attempts: tuple[Attempt, ...]
    calls: tuple[LLMCall, ...]
    timings: Timings
    error: str | None = None
    renamed: dict[str, str] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        return sum(c.usage.total_tokens for c in self.calls)

    def to_dict(self) -> dict[str, object]:
        return {
            "question": self.question,
            "pipeline": self.pipeline.value,
            "answer": None if self.answer is None else self.answer.to_json(),
            "answer_text": None if self.answer is None else self.answer.text,
            "type": None if self.answer is None else self.answer.type.value,
            "code": self.code,
            "columns": list(self.columns),
            "renamed_columns": self.renamed,
            "attempts": [a.to_dict() for a in self.attempts],
            "timings": self.timings.to_dict(),
            "llm_calls": [c.model_dump(mode="json") for c in self.calls],
            "tokens": self.tokens,
            "error": self.error,
        }


class TableQA:
    """Zero-shot code-generation table QA over one DataFrame."""

    def __init__(
        self,
        llm: LLMProvider,
        pipeline: Pipeline | str = Pipeline.AG_ECS_CF,
        *,
        fix_attempts: int = 1,
        limits: SandboxLimits | None = None,
    ) -> None:
        self.llm = llm
        self.pipeline = Pipeline(pipeline)
        if fix_attempts < 0:
            raise ForetabError(f"fix_attempts must be 0 or more, got {fix_attempts}")
        self.fix_attempts = fix_attempts if self.pipeline.fixes_code else 0
        self.limits = limits or SandboxLimits()

    def ask(
        self, df: pd.DataFrame, question: str, expected: AnswerType | None = None
    ) -> TableQAResult:
        """Answer ``question`` over ``df`` or raise ``TableQAError`` saying what failed."""
        result = self.run(df, question, expected)
        if result.answer is None:
            raise TableQAError(result.error or "no answer", result)
        return result

    def run(
        self, df: pd.DataFrame, question: str, expected: AnswerType | None = None
    ) -> TableQAResult:
        """Like ``ask`` but a failed question is returned (``answer=None``), not raised."""
        started = time.perf_counter()
        frame, profile = prepare(df)
        state = _Run(self, question, profile)
        try:
            state.select()
            state.generate_and_execute(frame)
        except LLMError as error:
            state.error = f"LLM failure: {error.message}"
        answer = None
        if state.value_ok:
            answer = normalise(state.value, expected)
        elif state.error is None:
            last = state.attempts[-1].failure if state.attempts else None
            state.error = "the generated code failed" + (f": {last.describe()}" if last else "")
        return TableQAResult(
            question=question,
            pipeline=self.pipeline,
            answer=answer,
            code=state.attempts[-1].code if state.attempts else None,
            columns=tuple(c.name for c in state.columns),
            attempts=tuple(state.attempts),
            calls=tuple(state.calls),
            timings=Timings(
                select_s=state.select_s,
                generate_s=state.generate_s,
                execute_s=state.execute_s,
                total_s=time.perf_counter() - started,
            ),
            error=None if answer is not None else state.error,
            renamed=profile.renamed,
        )


class _Run:
    """The mutable state of one question while the stages run."""

    def __init__(self, qa: TableQA, question: str, profile: TableProfile) -> None:
        self.qa = qa
        self.question = question
        self.profile = profile
        self.budget: CallBudget = qa.llm.options.new_budget()
        self.columns: tuple[ColumnInfo, ...] = profile.columns
        self.attempts: list[Attempt] = []
        self.calls: list[LLMCall] = []
        self.select_s = self.generate_s = self.execute_s = 0.0
        self.value: object = None
        self.value_ok = False
        self.error: str | None = None

    def _chat(self, prompt: str, purpose: str) -> str:
        reply = self.qa.llm.chat([ChatMessage.user(prompt)], budget=self.budget, purpose=purpose)
        self.calls.append(reply.call)
        return reply.text

    def select(self) -> None:
        pipeline = self.qa.pipeline
        if not pipeline.selects_columns:
            return
        started = time.perf_counter()
        prompt = prompts.column_selector(self.question, self.profile.columns, pipeline.enhanced)
        chosen = parse_column_list(self._chat(prompt, "column-selector"), self.profile.names)
        # An unreadable reply, or one naming no real column, falls back to every column.
        if chosen:
            self.columns = self.profile.subset(chosen)
        self.select_s = time.perf_counter() - started

    def generate_and_execute(self, frame: pd.DataFrame) -> None:
        pipeline = self.qa.pipeline
        prompt = prompts.answer_generator(self.question, self.columns, pipeline.enhanced)
        code = self._generate(prompt, "answer-generator")
        self._execute("generate", code, frame)
        for _ in range(self.qa.fix_attempts):
            if self.value_ok:
                return
            failure = self.attempts[-1].failure
            error = failure.describe() if failure else "unknown error"
            prompt = prompts.code_fixer(
                self.question, self.columns, code or "(no code)", error, pipeline.enhanced
            )
            code = self._generate(prompt, "code-fixer")
            self._execute("fix", code, frame)

    def _generate(self, prompt: str, purpose: str) -> str | None:
        started = time.perf_counter()
        text = self._chat(prompt, purpose)
        self.generate_s += time.perf_counter() - started
        return extract_code(text)

    def _execute(
        self, stage: Literal["generate", "fix"], code: str | None, frame: pd.DataFrame
    ) -> None:
        if code is None:
            failure = SandboxFailure(
                kind="refused",
                error_type="NoCode",
                message="the reply contains no Python code; return only a function "
                "`def answer(df: pd.DataFrame)`",
            )
            self.attempts.append(Attempt(stage, None, False, failure=failure))
            return
        started = time.perf_counter()
        result = run_code(code, frame, self.qa.limits)
        elapsed = time.perf_counter() - started
        self.execute_s += elapsed
        self.attempts.append(Attempt(stage, code, result.ok, result.value, result.failure, elapsed))
        if result.ok:
            self.value, self.value_ok = result.value, True
