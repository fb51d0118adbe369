"""The Retriever's second half: few-shot SQL generation checked through ``sqlQueryTool``.

The LLM writes SQL for the question and the retrieved tables and must run it with the
``sqlQueryTool``; the tool executes it through the SQL guard (read-only, catalog tables
only, row cap, time limit) and returns the rows or the guard's / database's error, which
the LLM repairs from — up to ``max_iterations`` calls (25 in the paper). A statement the
guard refuses (``DROP TABLE``, a future-year table, a second statement) never runs.
The final SQL becomes the question's history, read once more through the same guard.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence

from foretab.core.catalog import Retrieval
from foretab.core.plan import EntityRef, Plan
from foretab.core.series import History
from foretab.core.stages import HistoryRead
from foretab.errors import ForetabError, QueryError
from foretab.llm import ChatMessage, ChatReply, ToolCall, ToolSpec
from foretab.llm.errors import LLMReplyError
from foretab.llm.untrusted import data_block
from foretab.read.reader import rows_to_history
from foretab.sql.guard import GuardedExecutor, QueryResult
from foretab.sql.jsonable import json_value
from foretab.timefore.errors import AgentError
from foretab.timefore.examples import Example, pick
from foretab.timefore.extract import clean, extract_sql, looks_like_refusal, text_tool_calls
from foretab.timefore.prompts import render, sql_examples
from foretab.timefore.session import AgentSession, Conversation

TOOL_NAME = "sqlQueryTool"
SQL_TOOL = ToolSpec(
    name=TOOL_NAME,
    description="Execute one read-only SQL SELECT on the history price database and return "
    "its rows, or the error message if it fails or is refused.",
    parameters={
        "type": "object",
        "properties": {
            "sql_statement": {"type": "string", "description": "The SQL query to execute."}
        },
        "required": ["sql_statement"],
    },
)
DEFAULT_MAX_ITERATIONS = 25
PREVIEW_ROWS = 30
_ARG_NAMES = ("sql_statement", "sql", "query", "statement")


class ProjectResolver:
    """Which catalog project a row's ``project_name`` is, for questions the rules did not plan."""

    def __init__(self, projects: Sequence[EntityRef]) -> None:
        self._by_place: dict[tuple[str, str], set[str]] = {}
        for ref in projects:
            self._by_place.setdefault((ref.outer, ref.inner), set()).add(ref.name)

    def history(self, result: QueryResult, plan: Plan, retrieval: Retrieval) -> History:
        """The rows as a ``History``: the plan's projects, else those of the read tables."""
        if plan.entities:
            return rows_to_history(result, plan.entities)
        columns = [c.lower() for c in result.columns]
        if "project_name" not in columns:
            return rows_to_history(result, ())  # raises the column error
        at = columns.index("project_name")
        names = list(dict.fromkeys(str(row[at]) for row in result.rows))
        places = list(dict.fromkeys((t.outer, t.inner) for t in retrieval.tables))
        refs = [
            EntityRef(city, district, name)
            for name in names
            for city, district in places
            if name in self._by_place.get((city, district), ())
        ]
        unknown = [n for n in names if all(r.name != n for r in refs)]
        if unknown:
            raise QueryError(
                f"the query returned rows for {unknown[0]!r}, which is not a project of the "
                "retrieved tables"
            )
        return rows_to_history(result, refs)


def result_text(result: QueryResult, rows: int = PREVIEW_ROWS) -> str:
    """What the tool tells the LLM: columns, the first rows, the row count (quoted as data)."""
    return data_block(
        json.dumps(
            {
                "columns": list(result.columns),
                "rows": [[json_value(v) for v in row] for row in result.rows[:rows]],
                "row_count": len(result.rows),
                "truncated": result.truncated or len(result.rows) > rows,
            },
            ensure_ascii=False,
        )
    )


def tool_calls_of(reply: ChatReply, name: str, iteration: int) -> tuple[tuple[ToolCall, ...], bool]:
    """The reply's tool calls, and whether they were native (else written in its text)."""
    if reply.tool_calls:
        return reply.tool_calls, True
    found = text_tool_calls(reply.text, (name,))
    calls = tuple(
        ToolCall(id=f"text_call_{iteration}_{i}", name=n, arguments=a)
        for i, (n, a) in enumerate(found)
    )
    return calls, False


def tool_message(call: ToolCall, result: str, native: bool) -> ChatMessage:
    """A tool's result as the next message: a tool message, or user text for a text call."""
    if native:
        return ChatMessage.tool_result(call.id, result)
    # Servers refuse a tool message that answers no tool call of the assistant message.
    return ChatMessage.user(f"{call.name} result: {result}")


def tool_sql(call: ToolCall) -> str:
    """The SQL of a ``sqlQueryTool`` call, or ``LLMReplyError`` saying what is wrong."""
    if call.name != TOOL_NAME:
        raise LLMReplyError(f"there is no tool {call.name!r}; the only tool is {TOOL_NAME}")
    args = call.parsed_arguments()
    for key in _ARG_NAMES:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if value is not None:
            raise LLMReplyError(
                f"{TOOL_NAME} argument {key!r} must be a string of SQL, got {type(value).__name__}"
            )
    raise LLMReplyError(
        f"{TOOL_NAME} needs the argument sql_statement (a string), got {sorted(args)}"
    )


class SQLAgentReader:
    """History from the LLM's validated SQL (a ``HistoryReader``)."""

    name = "timefore.sql"

    def __init__(
        self,
        session: AgentSession,
        guard: GuardedExecutor,
        examples: Sequence[Example],
        resolver: ProjectResolver,
        *,
        max_iterations: int = DEFAULT_MAX_ITERATIONS,
    ) -> None:
        if max_iterations < 1:
            raise AgentError(f"max SQL iterations must be at least 1, got {max_iterations}")
        self.session = session
        self.guard = guard
        self.examples = pick(examples)
        self.resolver = resolver
        self.max_iterations = max_iterations

    def take_steps(self) -> tuple:
        return self.session.take_steps()

    def _run(self, sql: str, plan: Plan, retrieval: Retrieval) -> tuple[QueryResult, History]:
        result = self.guard.execute(sql)
        return result, self.resolver.history(result, plan, retrieval)

    def _tool(
        self, call: ToolCall, plan: Plan, retrieval: Retrieval
    ) -> tuple[str, tuple[str, QueryResult, History] | None]:
        started = time.perf_counter()
        ok: tuple[str, QueryResult, History] | None = None
        try:
            sql = tool_sql(call)
            result, history = self._run(sql, plan, retrieval)
            text = result_text(result)
            ok = (sql, result, history)
        except ForetabError as error:
            text = f"Error: {error.message}"
        self.session.tool(
            self.name, call.name, call.arguments, text, ok is not None,
            time.perf_counter() - started,
        )  # fmt: skip
        return text, ok

    def read(self, plan: Plan, retrieval: Retrieval) -> HistoryRead:
        tables = [t.table_name for t in retrieval.tables]
        if not tables:
            missing = ", ".join(m.caption for m in retrieval.matches) or "none"
            raise AgentError(
                f"no history table matches the captions the LLM wrote ({missing}); the store "
                "has no table for them (list tables with `foretab tables --db DB`)"
            )
        system = render("sql", plan.reference_month, examples=sql_examples(self.examples))
        conversation = Conversation(
            [
                ChatMessage.system(system),
                ChatMessage.user(
                    f"<Query>:{plan.question}\n<Table Caption>:{data_block(repr(tables))},\n<SQL>:"
                ),
            ]
        )
        last_ok: tuple[str, QueryResult, History] | None = None
        last_problem = ""
        for iteration in range(1, self.max_iterations + 1):
            reply = self.session.chat(
                self.name,
                conversation,
                purpose=f"SQL generation (iteration {iteration})",
                tools=[SQL_TOOL],
                tool_choice="auto",
            )
            conversation.add_reply(reply)
            calls, native = tool_calls_of(reply, TOOL_NAME, iteration)
            if calls:
                for call in calls:
                    text, ok = self._tool(call, plan, retrieval)
                    last_ok = ok or last_ok
                    last_problem = "" if ok else text
                    conversation.add(tool_message(call, text, native))
                continue
            sql = extract_sql(reply.text)
            if sql is None and last_ok is not None and not last_problem:
                sql = last_ok[0]  # "done" after a successful tool run: keep that statement
            if sql is None:
                body = clean(reply.text)
                last_problem = (
                    "the reply was empty"
                    if not body
                    else "the reply was a refusal"
                    if looks_like_refusal(body)
                    else "the reply had no SQL"
                )
                self.session.retry(self.name, f"{last_problem}: {body[:200]!r}", iteration)
                conversation.add(
                    ChatMessage.user(
                        f"Error: {last_problem}. Validate a SELECT with {TOOL_NAME}, then output "
                        'only {"sql": "<statement>"}.'
                    )
                )
                continue
            if last_ok is not None and _same(sql, last_ok[0]):
                return self._done(*last_ok)
            try:
                result, history = self._run(sql, plan, retrieval)
            except ForetabError as error:
                last_problem = f"Error: {error.message}"
                self.session.retry(self.name, f"final SQL failed: {error.message}", iteration)
                conversation.add(
                    ChatMessage.user(f"{last_problem}\nRevise the SQL and validate it again.")
                )
                continue
            return self._done(sql, result, history)
        if last_ok is not None and not last_problem:
            # It kept calling the tool with SQL that runs but never said it was done.
            self.session.retry(self.name, "no final answer: using the last SQL that ran", 0)
            return self._done(*last_ok)
        raise AgentError(
            f"the LLM wrote no SQL that runs after {self.max_iterations} iteration(s) "
            f"(last problem: {last_problem[:300] or 'none'}); raise --max-sql-iterations or "
            "try a stronger --llm-model"
        )

    def _done(self, sql: str, result: QueryResult, history: History) -> HistoryRead:
        return HistoryRead(
            history, sql=result.sql or sql, rows=len(result.rows), truncated=result.truncated
        )


def _same(a: str, b: str) -> bool:
    return " ".join(a.rstrip().rstrip(";").split()) == " ".join(b.rstrip().rstrip(";").split())
