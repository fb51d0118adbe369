"""The HTTP API in-process: endpoints, the answer object, errors, limits, token, hosts."""

from __future__ import annotations

import json
import threading
import time

import anyio
import httpx
import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from foretab.cli.main import app, register_commands
from foretab.converse.store import ConversationLimits, ConversationStore, owner_of
from foretab.web import AppSettings, EnginePool, create_app
from tests.web.conftest import TEST_HOSTS, banded_factory, client_for

FORECAST = "What will the price of Bund Garden in Huangpu District, Shanghai be next month?"
QUESTIONS = (
    "Which of Bund Garden or Xintiandi Court in Huangpu, Shanghai will see a bigger price increase next year?",
    "What was the highest price of Century Park Residence in Pudong New Area, Shanghai in 2021?",
    "What will the monthly prices of Science City Residence in Huangpu District, Guangzhou be from February to May 2022?",
    "What will the price of 外滩花园 in 黄浦区, 上海市 be next month?",
)
UNKNOWN = "What will the price of Crystal Palace in Huangpu District, Shanghai be next month?"


def _without_timings(doc: dict) -> dict:
    doc = dict(doc)
    doc.pop("timings")
    doc["steps"] = [{k: v for k, v in s.items() if k != "ms"} for s in doc["steps"]]
    return doc


def _cli_json(*args: str) -> tuple[int, dict]:
    register_commands()
    result = CliRunner().invoke(app, [*args, "--json"])
    return result.exit_code, json.loads(result.stdout.strip().splitlines()[-1])


def test_ask_returns_the_cli_answer_object(client, mini_duckdb) -> None:
    response = client.post("/api/ask", json={"question": FORECAST})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    doc = response.json()
    # the API adds the conversation's id and the question as resolved (docs/design.md §9)
    assert doc.pop("conversation_id") and doc.pop("asked").startswith("The price of")
    code, cli = _cli_json("ask", FORECAST, "--db", mini_duckdb, "--future", "oracle")
    assert code == 0
    assert _without_timings(doc) == _without_timings(cli)
    assert doc["answer"] == [[59947.94]]
    assert doc["future_source"] == "oracle"


def test_ask_future_mode_per_request(client) -> None:
    doc = client.post("/api/ask", json={"question": FORECAST, "future": "model"}).json()
    assert doc["future_source"] == "banded-persistence"
    value = doc["forecast"][0]["values"][0]
    assert value["lo"] < value["value"] < value["hi"]
    assert doc["interval_level"] == 0.8
    none = client.post("/api/ask", json={"question": FORECAST, "future": "none"}).json()
    assert none["answer"] == [[59365.31]]  # December 2021 carried forward


def test_chinese_question_round_trips(client) -> None:
    question = "What will the price of 外滩花园 in 黄浦区, 上海市 be next month?"
    response = client.post("/api/ask", json={"question": question})
    assert response.status_code == 200, response.text
    doc = response.json()
    assert doc["question"] == question
    assert doc["plan"]["projects"][0]["project"] == "Bund Garden"


def test_question_errors_are_the_cli_error_object(client, mini_duckdb) -> None:
    response = client.post("/api/ask", json={"question": UNKNOWN})
    assert response.status_code == 422
    code, cli = _cli_json("ask", UNKNOWN, "--db", mini_duckdb, "--future", "oracle")
    assert code == 2
    assert response.json() == cli
    error = response.json()["error"]
    assert error["type"] == "UnknownEntityError"
    assert "Crystal Palace" in error["message"] and error["suggestions"]


def test_request_validation(client) -> None:
    too_long = client.post("/api/ask", json={"question": "x" * 501})
    assert too_long.status_code == 422
    assert too_long.json()["error"]["type"] == "BadRequestError"
    assert "question" in too_long.json()["error"]["message"]
    extra = client.post("/api/ask", json={"question": FORECAST, "engine": "vanilla"})
    assert extra.status_code == 422 and "engine" in extra.json()["error"]["message"]
    unknown_field = client.post("/api/ask", json={"question": FORECAST, "sql": "x"})
    assert unknown_field.status_code == 422
    not_json = client.post("/api/ask", content=b"{", headers={"content-type": "application/json"})
    assert not_json.status_code == 422 and "error" in not_json.json()


def test_body_size_limit(shared_pool) -> None:
    pool = shared_pool
    with client_for(pool, max_body_bytes=1000) as small:
        body = json.dumps({"question": "a" * 2000}).encode()
        declared = small.post(
            "/api/ask", content=body, headers={"content-type": "application/json"}
        )
        assert declared.status_code == 413
        assert declared.json()["error"]["type"] == "RequestTooLargeError"

        def chunks():  # no Content-Length: the body is counted as it arrives
            yield body[:500]
            yield body[500:]

        chunked = small.post(
            "/api/ask", content=chunks(), headers={"content-type": "application/json"}
        )
        assert chunked.status_code == 413
        assert chunked.json()["error"]["type"] == "RequestTooLargeError"


def test_sql_goes_through_the_guard(client) -> None:
    ok = client.post(
        "/api/sql",
        json={
            "sql": "SELECT year, count(*) AS n FROM foretab_catalog WHERE city = ? GROUP BY year ORDER BY year",
            "params": ["Shanghai"],
        },
    )
    assert ok.status_code == 200, ok.text
    body = ok.json()
    assert body["columns"] == ["year", "n"] and body["rows"] == [[2019, 2], [2020, 2], [2021, 2]]
    assert "LIMIT" in body["sql"] and body["truncated"] is False
    refused = client.post("/api/sql", json={"sql": "DROP TABLE foretab_catalog"})
    assert refused.status_code == 400
    assert refused.json()["error"]["type"] == "GuardError"
    assert refused.json()["error"]["rule"] == "read-only"
    file_read = client.post("/api/sql", json={"sql": "SELECT * FROM read_csv('/etc/passwd')"})
    assert file_read.status_code == 400 and file_read.json()["error"]["type"] == "GuardError"


def test_tables_projects_health_examples(client) -> None:
    tables = client.get("/api/tables", params={"city": "shanghai"}).json()["tables"]
    assert len(tables) == 6 and {t["city"] for t in tables} == {"Shanghai"}
    assert tables[0]["name"].startswith("project_price_table_")
    found = client.get("/api/projects", params={"q": "外滩"}).json()
    assert found["total"] == 1 and found["projects"][0]["project"] == "Bund Garden"
    poly = client.get("/api/projects", params={"q": "poly garden"}).json()
    assert {p["city"] for p in poly["projects"]} == {"Shanghai", "Guangzhou"}
    limited = client.get("/api/projects", params={"limit": 5}).json()
    assert len(limited["projects"]) == 5 and limited["total"] == 36
    health = client.get("/api/health").json()
    assert health["reference_month"] == "2021-12" and health["projects"] == 36
    examples = client.get("/api/examples").json()
    assert len(examples) >= 3
    for question in examples:  # every example the page offers is answered
        assert client.post("/api/ask", json={"question": question}).status_code == 200, question


def test_openapi_schema_and_unknown_routes(client) -> None:
    schema = client.get("/api/openapi.json").json()
    assert {"/api/ask", "/api/sql", "/api/tables", "/api/projects", "/api/health"} <= set(
        schema["paths"]
    )
    assert {"ConversationAnswerDoc", "ClarifyReplyDoc"} <= set(schema["components"]["schemas"])
    assert client.get("/docs").status_code == 404  # the interactive docs would need a CDN
    missing = client.get("/api/nothing")
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "NotFoundError"
    wrong = client.get("/api/ask")
    assert wrong.status_code == 405 and wrong.json()["error"]["type"] == "MethodNotAllowedError"


def test_page_and_static_assets(client) -> None:
    page = client.get("/")
    assert page.status_code == 200 and 'id="question"' in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    for asset in ("app.js", "plot.js", "style.css"):
        assert client.get(f"/static/{asset}").status_code == 200
    assert "http" not in page.text.replace("http-equiv", "")  # nothing loaded from elsewhere


def test_token_is_required_when_set(shared_pool) -> None:
    pool = shared_pool
    token = "s3cret-token-0123456789"
    with client_for(pool, token=token) as guarded:
        assert guarded.get("/api/health").status_code == 401
        assert guarded.get("/api/health").json()["error"]["type"] == "UnauthorizedError"
        wrong = {"Authorization": "Bearer nope"}
        assert guarded.get("/api/health", headers=wrong).status_code == 401
        right = {"Authorization": f"Bearer {token}"}
        assert guarded.get("/api/health", headers=right).status_code == 200
        assert (
            guarded.post("/api/ask", json={"question": FORECAST}, headers=right).status_code == 200
        )
        assert guarded.get("/").status_code == 200  # the page itself holds no data


def test_foreign_host_header_is_refused(client) -> None:
    response = client.get("/api/health", headers={"host": "attacker.example:8000"})
    assert response.status_code == 421
    assert response.json()["error"]["type"] == "HostNotAllowedError"


def test_no_cors_unless_asked(shared_pool, client) -> None:
    pool = shared_pool
    origin = {"Origin": "http://elsewhere.test"}
    assert "access-control-allow-origin" not in client.get("/api/health", headers=origin).headers
    with client_for(pool, cors_origins=("http://elsewhere.test",)) as cors:
        allowed = cors.get("/api/health", headers=origin).headers
        assert allowed["access-control-allow-origin"] == "http://elsewhere.test"
    token = "cors-token-0123456789abcdef"
    with client_for(pool, cors_origins=("http://elsewhere.test",), token=token) as cors:
        preflight = cors.options(
            "/api/ask",
            headers={
                **origin,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type",
            },
        )
        assert preflight.status_code == 200
        assert "authorization" in preflight.headers["access-control-allow-headers"].lower()
        assert cors.post("/api/ask", json={"question": FORECAST}, headers=origin).status_code == 401


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_concurrent_requests_never_share_an_engine(mini_duckdb) -> None:
    lock = threading.Lock()
    in_use: dict[int, tuple[int, int]] = {}  # engine -> (thread, depth)
    overlaps: list[int] = []
    most = [0]
    base = banded_factory(mini_duckdb)

    def tracked_factory(mode, warm):
        engine = base(mode, warm)
        ask, execute = engine.ask, engine.guard.execute

        def guarded(work):
            def run(*args):
                me = threading.get_ident()
                with lock:
                    # ask() calls the guard itself: re-entry on the same thread is fine.
                    thread, depth = in_use.get(id(engine), (me, 0))
                    if thread != me:
                        overlaps.append(id(engine))
                    in_use[id(engine)] = (me, depth + 1)
                    most[0] = max(most[0], len(in_use))
                try:
                    time.sleep(0.02)  # widen the window: a race, and side-by-side runs, show
                    return work(*args)
                finally:
                    with lock:
                        thread, depth = in_use[id(engine)]
                        if depth == 1:
                            del in_use[id(engine)]
                        else:
                            in_use[id(engine)] = (thread, depth - 1)

            return run

        engine.ask = guarded(ask)
        engine.guard.execute = guarded(execute)
        return engine

    pool = EnginePool(tracked_factory, size=3, default="oracle")
    questions = [FORECAST, *QUESTIONS]
    try:
        app = create_app(pool, AppSettings(allowed_hosts=TEST_HOSTS, allow_oracle=True))
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            expected = {}
            for q in questions:
                expected[q] = (await c.post("/api/ask", json={"question": q})).json()["answer"]
            results: list[tuple[str, int, object]] = []

            async def one(i: int) -> None:
                if i % 5 == 4:
                    r = await c.post(
                        "/api/sql", json={"sql": "SELECT count(*) FROM foretab_catalog"}
                    )
                    results.append(("sql", r.status_code, r.json()["rows"]))
                    return
                q = questions[i % len(questions)]
                r = await c.post("/api/ask", json={"question": q})
                results.append((q, r.status_code, r.json()["answer"]))

            async with anyio.create_task_group() as group:
                for i in range(60):
                    group.start_soon(one, i)
    finally:
        pool.close()
    assert len(results) == 60
    assert all(status == 200 for _, status, _ in results), results
    for q, _, answer in results:
        assert answer == ([[12]] if q == "sql" else expected[q])
    assert not overlaps, "an engine was used by two requests at once"
    assert 2 <= most[0] <= 3  # requests did run side by side, never more than the pool
    assert pool.engines == 0  # closed


def test_an_engine_the_server_does_not_offer_is_refused(client) -> None:
    response = client.post("/api/ask", json={"question": FORECAST, "engine": "timefore"})
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["type"] == "EngineChoiceError"
    assert "foretab serve --engine timefore" in error["message"]
    assert client.get("/api/health").json()["engines"] == ["rules"]


def test_hybrid_engine_served_next_to_the_rules(mini_duckdb, fake_openai) -> None:
    from foretab.llm import OpenAIProvider
    from foretab.web.pool import agent_factory

    llm = OpenAIProvider(fake_openai.options())
    pool = EnginePool(
        banded_factory(mini_duckdb),
        size=2,
        default="oracle",
        agents=("hybrid", agent_factory(llm)),
    )
    try:
        with client_for(pool) as c:
            assert c.get("/api/health").json()["engines"] == ["rules", "hybrid"]
            rules = c.post("/api/ask", json={"question": FORECAST}).json()
            hybrid = c.post("/api/ask", json={"question": FORECAST, "engine": "hybrid"})
            assert hybrid.status_code == 200, hybrid.text
            assert hybrid.json()["answer"] == rules["answer"] == [[59947.94]]
            # The rules planned it, so the LLM was never called.
            assert fake_openai.requests == []
            vanilla = c.post("/api/ask", json={"question": FORECAST, "engine": "vanilla"})
            assert vanilla.status_code == 422
    finally:
        pool.close()
        llm.close()


def test_prewarm_builds_the_pool_once(pool) -> None:
    assert pool.engines == 1
    pool.prewarm()
    assert pool.engines == pool.size == 3
    pool.prewarm()
    assert pool.engines == 3


# ---- conversations (docs/design.md §4.3, §9): ids, follow-ups, clarify, limits ------------

CONVERSE_BUND = "What was the price of Bund Garden in Huangpu, Shanghai in December 2021?"
CONVERSE_POLY = "What was the price of Poly Garden in December 2021?"


def _converse(client: TestClient, question: str, cid: str | None = None, **headers: str):
    body = {"question": question} | ({"conversation_id": cid} if cid else {})
    return client.post("/api/ask", json=body, headers=headers)


def test_every_answer_has_an_id_and_sending_it_back_follows_up(client: TestClient) -> None:
    first = _converse(client, CONVERSE_BUND)
    assert first.status_code == 200, first.text
    cid = first.json()["conversation_id"]
    assert first.json()["answer"] == [[59365.31]]
    follow = _converse(client, "and in 2020?", cid)
    assert follow.status_code == 200, follow.text
    doc = follow.json()
    assert doc["conversation_id"] == cid
    alone = _converse(
        client, "What was the average price of Bund Garden in Huangpu, Shanghai in 2020?"
    )
    assert doc["answer"] == alone.json()["answer"] == [[64527.45]]
    assert doc["canonical"] == "the mean price of Bund Garden from January 2020 to December 2020"
    assert "Bund Garden (Huangpu District, Shanghai)" in doc["asked"]
    units = _converse(client, "in units?", cid).json()
    assert units["plan"]["metric"] == "units" and units["answer"] == [[788.0]]
    # another conversation does not see this one's thread
    assert _converse(client, "and in 2020?").status_code == 422


def test_a_clarify_is_200_and_choosing_continues(client: TestClient) -> None:
    reply = _converse(client, CONVERSE_POLY)
    assert reply.status_code == 200, reply.text
    doc = reply.json()
    choices = doc["clarify"]["choices"]
    assert len(choices) == 2 and "Guangzhou" in choices[0] and "Shanghai" in choices[1]
    picked = _converse(client, choices[1], doc["conversation_id"]).json()
    assert picked["answer"] == _converse(client, choices[1]).json()["answer"]
    again = _converse(client, CONVERSE_POLY).json()
    both = _converse(client, "both", again["conversation_id"]).json()
    assert [row[0] for row in both["answer"]] == ["Poly Garden", "Poly Garden"]


def test_unknown_expired_and_other_tokens_ids_are_404(shared_pool: EnginePool) -> None:
    limits = ConversationLimits(max_conversations=2, max_turns=3, max_age_s=600)
    with client_for(shared_pool, conversation_limits=limits) as client:
        store: ConversationStore = client.app.state.conversations  # type: ignore[attr-defined]
        now = [1_000.0]
        store.clock = lambda: now[0]
        assert _converse(client, CONVERSE_BUND, "no-such-conversation").status_code == 404
        cid = _converse(
            client, CONVERSE_BUND, authorization="Bearer token-of-alice-0123456"
        ).json()["conversation_id"]
        theirs = _converse(
            client, "and in 2020?", cid, authorization="Bearer token-of-bob-012345678"
        )
        assert theirs.status_code == 404 and "another token" in theirs.json()["error"]["message"]
        mine = _converse(client, "and in 2020?", cid, authorization="Bearer token-of-alice-0123456")
        assert mine.status_code == 200, mine.text
        now[0] += 601  # idle past max_age_s
        late = _converse(client, "and in 2019?", cid, authorization="Bearer token-of-alice-0123456")
        assert late.status_code == 404
        # bounded in number: the least recently used conversation goes first
        ids = [_converse(client, CONVERSE_BUND).json()["conversation_id"] for _ in range(3)]
        assert _converse(client, "in units?", ids[0]).status_code == 404
        assert _converse(client, "in units?", ids[2]).status_code == 200
        assert store.count(owner_of(None)) <= 2


def test_a_conversation_keeps_its_last_turns() -> None:
    now = [0.0]
    store = ConversationStore(limits=ConversationLimits(max_turns=3), clock=lambda: now[0])
    store.save("", "c", ["a", "b", "c", "d", "e"])
    assert store.load("", "c") == ["c", "d", "e"]
    assert store.load(owner_of("x" * 20), "c") is None
    now[0] = 10_000.0
    assert store.load("", "c") is None and store.count() == 0
