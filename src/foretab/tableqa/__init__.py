"""Code-generation table QA (the LyS PRESTA system): an LLM writes pandas, a sandbox runs it.

``TableQA(llm).ask(df, question)``; pipelines ``ag``, ``ag+cs``, ``ag+ecs``, ``ag+ecs+cf``.
"""

from foretab.tableqa.answer import AnswerType, TypedAnswer, normalise
from foretab.tableqa.pipeline import (
    Attempt,
    Pipeline,
    TableQA,
    TableQAError,
    TableQAResult,
    Timings,
)
from foretab.tableqa.sandbox import SandboxLimits

__all__ = [
    "AnswerType",
    "Attempt",
    "Pipeline",
    "SandboxLimits",
    "TableQA",
    "TableQAError",
    "TableQAResult",
    "Timings",
    "TypedAnswer",
    "normalise",
]
