"""The Retriever's second half: few-shot SQL generation checked through ``sqlQueryTool``.

The LLM writes SQL for the question and the retrieved tables and must run it with the
``sqlQueryTool``; the tool executes it through the SQL guard (read-only, catalog tables
only, row cap, time limit) and returns the rows or the guard's / database's error, which
the LLM repairs from — up to ``max_iterations`` calls (25 in the paper). A statement the
guard refuses (``DROP TABLE``, a future-year table, a second statement) never runs.
The final SQL becomes the question's history, read once more through the same guard.
The guard offers ``forecast('table', horizon => N)`` too (the store model's forecasts as a
relation, docs/design.md §10), so the LLM can read forecasts — rank projects by their 2022
forecast — in one statement through the same tool.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from foretab.core.catalog import Retrieval
from foretab.core.plan import EntityRef, Plan
from foretab.core.series import History
from foretab.core.stages import HistoryRead
from foretab.errors import ForetabError, QueryError
from foretab.llm import ChatMessage, ToolCall, ToolSpec
from foretab.llm.errors import LLMReplyError
from foretab.llm.untrusted import data_block
from foretab.read.reader import rows_to_history
from foretab.sql.guard import GuardedExecutor, QueryResult
from foretab.sql.jsonable import json_value
from foretab.timefore.errors import AgentError
from foretab.timefore.examples import Example, pick
from foretab.timefore.extract import clean, extract_sql, looks_like_refusal
from foretab.timefore.prompts import render, sql_examples
from foretab.timefore.session import AgentSession, Conversation
from foretab.timefore.tools import ToolResult, tool_turn

#: What a successful ``sqlQueryTool`` call read: its SQL, the rows and the history in them.
_Read = tuple[str, QueryResult, History]

TOOL_NAME = "sqlQueryTool"
SQL_TOOL = ToolSpec(
    name=TOOL_NAME,
    description="Execute one read-only SQL SELECT on the history price database and return "
    "its rows, or the error message if it fails or is refused. Besides the tables, "
    "forecast('<table>', horizon => N) is a relation of the price model's forecasts "
    "(project_name, month, value, lo, hi) for the N months after the current month.",
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


def result_text(result: QueryResult, rows: int = PREVIEW_ROWS, note: str = "") -> str:
    """What the tool tells the LLM: columns, the first rows, the row count (quoted as data).

    ``note`` is foretab's own word on the statement, outside the data.
    """
    text = data_block(
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
    return f"{text}\nNote: {note}" if note else text


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

    def _tool(self, call: ToolCall, plan: Plan, retrieval: Retrieval) -> ToolResult[_Read]:
        """Run one ``sqlQueryTool`` call; its value is the history read (a final-SQL candidate)."""
        sql = tool_sql(call)
        result = self.guard.execute(sql)
        try:
            read = (sql, result, self.resolver.history(result, plan, retrieval))
        except ForetabError as error:
            # It ran (a forecast() ranking, a count): the LLM reads the rows, and why this
            # statement cannot be the final history SQL.
            note = f"the final SQL cannot be this statement: {error.message}"
            return ToolResult(result_text(result, note=note), None, ran=True)
        return ToolResult(result_text(result), read, ran=True)

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
            reply, results = tool_turn(
                self.session,
                self.name,
                conversation,
                SQL_TOOL,
                lambda call: self._tool(call, plan, retrieval),
                purpose=f"SQL generation (iteration {iteration})",
                iteration=iteration,
            )
            if results:
                for outcome in results:
                    last_ok = outcome.value or last_ok
                    last_problem = "" if outcome.value else outcome.text
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
