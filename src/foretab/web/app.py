"""The ASGI app: a thin JSON layer over ``Engine`` and the SQL guard, plus the web page.

Every endpoint is a pydantic model in and out (``foretab.web.models``); work that touches
the store runs in a worker thread on an engine checked out of the ``EnginePool``, so the
event loop never blocks and no connection is shared. Errors are the CLI's error object.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import TypeVar

import anyio.to_thread
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

import foretab
from foretab.converse.store import ConversationLimits, ConversationStore
from foretab.core.schema import ErrorDoc
from foretab.errors import ForetabError
from foretab.llm.redact import mask
from foretab.sql.guard import QueryResult
from foretab.sql.jsonable import json_value
from foretab.web.conversations import conversation_turn, owner_of_request
from foretab.web.errors import (
    BadRequestError,
    ConversationFullError,
    ConversationNotFoundError,
    HttpError,
    InternalError,
    MethodNotAllowedError,
    NotFoundError,
    OracleNotAllowedError,
    RequestTooLargeError,
    ServerBusyError,
    error_json,
    status_for,
)
from foretab.web.examples import example_questions
from foretab.web.gate import LOOPBACK_HOSTS, Gate, GateSettings
from foretab.web.models import (
    AskRequest,
    ClarifyReplyDoc,
    ConversationAnswerDoc,
    HealthDoc,
    ProjectDoc,
    ProjectsDoc,
    SqlRequest,
    SqlResultDoc,
    TableDoc,
    TablesDoc,
)
from foretab.web.pool import EnginePool
from foretab.web.search import search_projects
from foretab.web.stream import StreamedJSON

log = logging.getLogger("foretab.web")

T = TypeVar("T")

#: Default request body limit: a question or a query is a few hundred bytes.
MAX_BODY_BYTES = 64 * 1024
#: Default cap on a /api/sql response as sent (JSON bytes, not Python object size).
MAX_RESPONSE_BYTES = 32 * 2**20

_ERRORS: dict[int | str, dict[str, object]] = {
    code: {"model": ErrorDoc, "description": text}
    for code, text in (
        (400, "refused by the SQL guard, or the query failed"),
        (401, "missing or wrong bearer token"),
        (413, "request body too large"),
        (422, "the question or request cannot be answered as asked"),
        (503, "the server's queue is full (retry after Retry-After seconds)"),
        (504, "no answer within the server's request timeout"),
    )
}


@dataclass(frozen=True, slots=True)
class AppSettings:
    """How the app is exposed; ``cors_origins`` empty means no CORS headers at all."""

    token: str | None = None
    allowed_hosts: tuple[str, ...] = LOOPBACK_HOSTS
    max_body_bytes: int = MAX_BODY_BYTES
    cors_origins: tuple[str, ...] = ()
    # The oracle reads the future store (the answers): evaluation only, off unless asked.
    allow_oracle: bool = False
    # /api/sql: rows past this many bytes of JSON are left out (truncated: true).
    max_response_bytes: int = MAX_RESPONSE_BYTES
    # A client that accepts no chunk of a response for this long is dropped.
    send_timeout_s: float = 30.0
    # Which process of `foretab serve --workers N` this is (0 to N-1), shown by /api/health.
    worker: int = 0
    # Conversations kept (docs/design.md §4.3): per token, in number, turns and idle time;
    # a file shared by every worker of `foretab serve --workers N` (else in memory).
    conversation_limits: ConversationLimits = field(default_factory=ConversationLimits)
    conversations_path: str = ":memory:"


def create_app(pool: EnginePool, settings: AppSettings | None = None) -> FastAPI:
    """The app serving ``pool``'s store; the caller owns (and closes) the pool."""
    settings = settings or AppSettings()
    if pool.default == "oracle" and not settings.allow_oracle:
        raise ForetabError(
            "the oracle future source reads the future store (the answers); it is for "
            "evaluation only: start `foretab serve` with --allow-oracle to serve it, or use "
            "--future model or none"
        )
    app = FastAPI(
        title="foretab",
        version=foretab.__version__,
        summary="Questions about past and future prices over a foretab store.",
        docs_url=None,  # the interactive docs load scripts from a CDN; the schema is enough
        redoc_url=None,
        openapi_url="/api/openapi.json",
    )
    _add_error_handlers(app)
    _add_api(app, pool, settings)
    _add_page(app, settings.allow_oracle)
    if settings.cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["authorization", "content-type"],
        )
    app.add_middleware(
        Gate,
        settings=GateSettings(settings.token, settings.allowed_hosts, settings.max_body_bytes),
    )
    return app


def _json(doc_text: str, status: int = 200) -> Response:
    # An answer's trace carries LLM replies, which may echo the API key.
    return Response(mask(doc_text), status_code=status, media_type="application/json")


def _error_response(error: ForetabError) -> Response:
    response = _json(error_json(error), status_for(error))
    if isinstance(error, ServerBusyError):
        response.headers["retry-after"] = str(error.retry_after_s)
    return response


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ForetabError)
    async def foretab_error(_request: Request, exc: ForetabError) -> Response:
        return _error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def bad_request(_request: Request, exc: RequestValidationError) -> Response:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err.get("loc", ()) if p not in ("body", "query"))
            problems.append(f"{where or 'body'}: {err.get('msg', 'invalid')}")
        return _error_response(
            BadRequestError(
                "the request is not valid: " + "; ".join(problems),
                suggestions=("see the request schemas in /api/openapi.json",),
            )
        )

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        error: HttpError
        if exc.status_code == 404:
            error = NotFoundError(
                f"no endpoint {request.url.path}; the API is described at /api/openapi.json"
            )
        elif exc.status_code == 405:
            error = MethodNotAllowedError(
                f"{request.method} is not allowed on {request.url.path}; see /api/openapi.json"
            )
        elif exc.status_code == 413:
            error = RequestTooLargeError(str(exc.detail))
        else:
            error = HttpError(str(exc.detail))
            error.status = exc.status_code
        return _error_response(error)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return _error_response(
            InternalError(
                f"unexpected {type(exc).__name__} while answering {request.url.path}; the "
                "server log (the terminal running `foretab serve`) has the details"
            )
        )


def _add_api(app: FastAPI, pool: EnginePool, settings: AppSettings) -> None:
    allow_oracle = settings.allow_oracle

    examples_by_generation: dict[str | None, tuple[str, ...]] = {}
    checks: set[asyncio.Future[None]] = set()

    def current_examples() -> tuple[str, ...]:
        # Chosen (and checked with the planner) once per store generation the pool serves.
        if pool.generation not in examples_by_generation:
            examples_by_generation.clear()
            examples_by_generation[pool.generation] = tuple(pool.examples(example_questions))
        return examples_by_generation[pool.generation]

    current_examples()  # at start-up: a store the planner cannot read fails here

    @app.get("/api/health", response_model=HealthDoc, tags=["store"])
    async def health() -> HealthDoc:
        """The store being served, its reference month ('now') and its size.

        From memory: no store read, no worker thread, so it answers while every engine is
        busy. A check for a new ingest, when one is due, runs in the background (the
        store routes wait for it), so a proxy's health checks keep an idle worker current.
        """
        if pool.refresh_due():
            task = asyncio.ensure_future(pool.refreshed())
            checks.add(task)  # a reference until done: the loop keeps only weak ones
            task.add_done_callback(checks.discard)
        return HealthDoc(
            version=foretab.__version__,
            store=pool.public_name,
            reference_month=pool.reference.iso,
            tables=len(pool.catalog),
            projects=len(pool.projects),
            future=pool.default,
            engines=list(pool.engine_names),
            oracle=allow_oracle,
            generation=pool.generation,
            worker=settings.worker,
        )

    @app.get("/api/tables", response_model=TablesDoc, tags=["store"])
    async def tables(
        city: str | None = Query(None, max_length=100),
        district: str | None = Query(None, max_length=100),
    ) -> TablesDoc:
        """The history catalog (as `foretab tables --json`), optionally for one city/district."""
        await pool.refreshed()
        return TablesDoc(
            tables=[
                TableDoc(
                    name=e.table_name,
                    caption=e.caption,
                    city=e.outer,
                    district=e.inner,
                    year=e.year,
                    rows=e.rows,
                )
                for e in pool.catalog
                if (city is None or e.outer.lower() == city.strip().lower())
                and (district is None or e.inner.lower() == district.strip().lower())
            ]
        )

    @app.get("/api/projects", response_model=ProjectsDoc, tags=["store"])
    async def projects(
        q: str = Query("", max_length=200, description="words of the name, any language"),
        city: str | None = Query(None, max_length=100),
        district: str | None = Query(None, max_length=100),
        limit: int = Query(50, ge=1, le=500),
    ) -> ProjectsDoc:
        """Projects whose name, district or city (English or Chinese) contain every word of q."""
        await pool.refreshed()
        found = search_projects(pool.projects, q, city=city, district=district)
        return ProjectsDoc(
            projects=[
                ProjectDoc(
                    city=p.outer,
                    district=p.inner,
                    project=p.name,
                    first_month=p.first_month.iso,
                    last_month=p.last_month.iso,
                    months=p.n_months,
                    aliases=list(p.aliases),
                )
                for p in found[:limit]
            ],
            total=len(found),
        )

    @app.get("/api/examples", response_model=list[str], tags=["questions"])
    async def examples() -> list[str]:
        """Example questions about projects of this store (one per kind of question)."""
        await pool.refreshed()
        return list(current_examples())

    conversations = ConversationStore(settings.conversations_path, settings.conversation_limits)
    app.state.conversations = conversations
    in_memory = settings.conversations_path == ":memory:"

    async def stored(call: Callable[..., T], *args: object) -> T:
        # In memory a load or save takes ~0.1 ms and waits for no one: run on the event
        # loop, it saves a thread round trip. The file shared by `--workers N` may wait for
        # another process's write, so it stays off the loop.
        if in_memory:
            return call(*args)
        return await anyio.to_thread.run_sync(call, *args)

    @app.post(
        "/api/ask",
        response_model=ConversationAnswerDoc | ClarifyReplyDoc,
        responses={**_ERRORS, 404: {"model": ErrorDoc, "description": "no such conversation"}},
        tags=["questions"],
    )
    async def ask(request: AskRequest, http: Request) -> Response:
        """Answer a question: `foretab ask --json`'s object plus its `conversation_id`.

        Send the id back with the next question to follow up ("and next year?", "what
        about X?", 那明年呢？); a name with several matches answers (status 200) with a
        `clarify` object whose choices are full questions. An unknown or expired id, or
        another token's, is a 404.
        """
        if (request.future or pool.default) == "oracle" and not allow_oracle:
            raise OracleNotAllowedError(
                "this server does not offer the oracle future source (it reads the future "
                "store: evaluation only); ask with future 'model' or 'none', or start "
                "`foretab serve` with --allow-oracle",
                suggestions=("model", "none"),
            )
        owner = owner_of_request(http.headers.get("authorization"))
        limits = conversations.limits
        if request.conversation_id is None:
            conversation_id, said = conversations.new(owner), []
        else:
            conversation_id = request.conversation_id
            found = await stored(conversations.load, owner, conversation_id)
            if found is None:
                raise ConversationNotFoundError(
                    f"no conversation {conversation_id!r} for this token: unknown, or idle "
                    f"for more than {limits.max_age_s / 60:g} minutes, or started with another "
                    "token; leave conversation_id out to start a new one"
                )
            said = found
            if len(said) >= limits.max_turns:
                # The thread is replayed from its first turn (every follow-up reads the
                # ones before it), so it is not cut: a full one is ended, never misread.
                raise ConversationFullError(
                    f"conversation {conversation_id!r} has had {limits.max_turns} turns, this "
                    "server's most; leave conversation_id out to start a new one (ask the "
                    "question in full)"
                )
        rendered = await pool.with_engine(
            request.engine,
            request.future,
            lambda e: conversation_turn(
                e, conversation_id, said, request.question, limits.max_turns
            ),
        )
        await stored(conversations.save, owner, conversation_id, [*said, request.question])
        response = _json(rendered)
        # which process answered (`serve --workers N`): a conversation may move between them
        response.headers["x-foretab-worker"] = str(settings.worker)
        return response

    @app.post("/api/sql", response_model=SqlResultDoc, responses=_ERRORS, tags=["store"])
    async def sql(request: SqlRequest) -> Response:
        """One read-only SELECT through the SQL guard (as `foretab sql --json`).

        The JSON is capped at the server's response size (rows past it are left out and
        ``truncated`` is true) and encoded in the worker thread, off the event loop.
        """
        cap = settings.max_response_bytes
        body = await pool.run(
            None, lambda e: sql_result_json(e.sql(request.sql, request.params), cap)
        )
        return StreamedJSON(body, send_timeout_s=settings.send_timeout_s)


_ORACLE_OPTION = re.compile(rb'\s*<option value="oracle">[^<]*</option>')


def sql_result_json(result: QueryResult, max_bytes: int) -> bytes:
    """``SqlResultDoc`` as JSON bytes, rows left out past ``max_bytes`` (``truncated``)."""

    def encode(value: object) -> bytes:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    tail = {"sql": result.sql, "ms": round(result.elapsed_s * 1000, 3)}
    head = b'{"columns":' + encode(list(result.columns)) + b',"rows":['
    budget = max_bytes - len(head) - len(encode(tail)) - 64
    rows: list[bytes] = []
    size, truncated = 0, result.truncated
    for row in result.rows:
        encoded = encode([json_value(v) for v in row])
        size += len(encoded) + 1
        if size > budget:
            truncated = True
            break
        rows.append(encoded)
    ending = b'],"truncated":' + encode(truncated) + b"," + encode(tail)[1:]
    return head + b",".join(rows) + ending


def _add_page(app: FastAPI, allow_oracle: bool) -> None:
    static = resources.files("foretab.web") / "static"
    index = (static / "index.html").read_bytes()
    if not allow_oracle:
        index = _ORACLE_OPTION.sub(b"", index)  # the page offers only what the server serves

    @app.get("/", include_in_schema=False)
    async def page() -> Response:
        return Response(index, media_type="text/html; charset=utf-8")

    app.mount("/static", StaticFiles(packages=[("foretab.web", "static")]), name="static")


__all__ = ["AppSettings", "create_app"]
