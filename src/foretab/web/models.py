"""Request and response bodies of the HTTP API (pydantic, ``extra="forbid"``).

Answers and errors reuse the published documents of ``foretab.core.schema`` (``AnswerDoc``,
``ErrorDoc``): ``POST /api/ask`` returns exactly what ``foretab ask --json`` prints.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, JsonValue

from foretab.core.schema import AnswerDoc, Doc
from foretab.limits import MAX_QUESTION_CHARS

#: Longest SQL text accepted by ``POST /api/sql``.
MAX_SQL_CHARS = 10_000

FutureName = Literal["model", "oracle", "none"]
EngineName = Literal["rules", "timefore", "vanilla", "hybrid"]


class AskRequest(Doc):
    """A question for ``POST /api/ask``."""

    question: str = Field(
        min_length=1,
        max_length=MAX_QUESTION_CHARS,
        examples=[
            "What will the average price of Bund Garden in Huangpu District, Shanghai be next month?"
        ],
    )
    engine: EngineName = Field(
        "rules",
        description="question engine: 'rules' (no LLM), or the LLM engine the server was "
        "started with (`foretab serve --engine`); see /api/health 'engines'",
    )
    future: FutureName | None = Field(
        None,
        description="where future values come from: 'model' (the store's trained forecaster), "
        "'oracle' (the future store; evaluation only) or 'none' (last observed value); "
        "default: the server's --future",
    )
    conversation_id: str | None = Field(
        None,
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9_-]+$",
        description="continue this conversation (the id an earlier answer carried): a "
        "follow-up ('and next year?', 那明年呢？) keeps what it does not name; leave it out "
        "to start a new one",
    )


class ConversationAnswerDoc(AnswerDoc):
    """An answer within a conversation: ``foretab ask --json``'s object plus the thread's id."""

    conversation_id: str = Field(description="send it back with the next question to follow up")
    asked: str = Field(
        "", description="the question as resolved, in full, each named project with its place"
    )


class ClarifyDoc(Doc):
    """A name (or follow-up) with several candidates: each choice is a full question."""

    message: str
    choices: list[str] = Field(
        description="send one back (or its number, 'both') as the next question"
    )


class ClarifyReplyDoc(Doc):
    """``POST /api/ask``'s reply (status 200) when a choice is needed to go on."""

    conversation_id: str
    question: str
    clarify: ClarifyDoc


class SqlRequest(Doc):
    """One read-only SELECT for ``POST /api/sql``; ``?`` placeholders bind ``params``."""

    sql: str = Field(min_length=1, max_length=MAX_SQL_CHARS)
    params: list[str | int | float] = Field(default_factory=list, max_length=1000)


class SqlResultDoc(Doc):
    """Rows of a guarded query; ``truncated`` says the row cap was hit."""

    columns: list[str]
    rows: list[list[JsonValue]]
    truncated: bool
    sql: str = Field(description="the statement that ran (checked and capped by the guard)")
    ms: float


class TableDoc(Doc):
    """One history table of the catalog (as ``foretab tables --json``)."""

    name: str
    caption: str
    city: str
    district: str
    year: int
    rows: int


class TablesDoc(Doc):
    """The history catalog."""

    tables: list[TableDoc]


class ProjectDoc(Doc):
    """One project the engine can answer about."""

    city: str
    district: str
    project: str
    first_month: str = Field(description="YYYY-MM")
    last_month: str = Field(description="YYYY-MM")
    months: int
    aliases: list[str] = Field(description="other names (e.g. the Chinese name)")


class ProjectsDoc(Doc):
    """Projects matching a search, in catalog order; ``total`` counts all matches."""

    projects: list[ProjectDoc]
    total: int


class HealthDoc(Doc):
    """``GET /api/health``: the store served and its reference month."""

    status: Literal["ok"] = "ok"
    version: str
    store: str
    reference_month: str | None
    tables: int
    projects: int
    future: FutureName
    engines: list[str] = Field(description="engines a request may ask for")
    oracle: bool = Field(
        False, description="whether a request may ask for future 'oracle' (--allow-oracle)"
    )
    generation: str | None = Field(
        None, description="the store's ingest being served (changes with each new ingest)"
    )
    worker: int = Field(0, description="the server process that answered (0 to --workers - 1)")
