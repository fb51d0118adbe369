"""Issue 28's HTTP items, each against a real server on loopback where it is about sockets.

The oracle (item 4): off unless `foretab serve --allow-oracle`; the page does not offer it.
"""

from __future__ import annotations

import httpx
import pytest

from foretab.errors import ForetabError
from foretab.web import AppSettings, EnginePool, create_app
from tests.web.conftest import TEST_HOSTS, banded_factory
from tests.web.server import serving

FORECAST = "What will the average price of Bund Garden in Huangpu District, Shanghai be next month?"


@pytest.fixture(scope="module")
def model_pool(web_db: str):
    pool = EnginePool(banded_factory(web_db), size=2, default="model")
    yield pool
    pool.close()


def test_oracle_is_refused_unless_the_server_allows_it(model_pool) -> None:
    with serving(create_app(model_pool)) as url:
        refused = httpx.post(url + "/api/ask", json={"question": FORECAST, "future": "oracle"})
        assert refused.status_code == 403, refused.text
        error = refused.json()["error"]
        assert error["type"] == "OracleNotAllowedError" and "--allow-oracle" in error["message"]
        assert httpx.post(url + "/api/ask", json={"question": FORECAST}).status_code == 200
        page = httpx.get(url + "/").text
        assert 'value="oracle"' not in page and 'value="model"' in page
        assert httpx.get(url + "/api/health").json()["oracle"] is False


def test_oracle_is_served_with_the_evaluation_flag(model_pool) -> None:
    with serving(create_app(model_pool, AppSettings(allow_oracle=True))) as url:
        answer = httpx.post(url + "/api/ask", json={"question": FORECAST, "future": "oracle"})
        assert answer.status_code == 200 and answer.json()["future_source"] == "oracle"
        assert 'value="oracle"' in httpx.get(url + "/").text
        assert httpx.get(url + "/api/health").json()["oracle"] is True


def test_an_oracle_default_needs_the_flag(web_db: str) -> None:
    pool = EnginePool(banded_factory(web_db), size=1, default="oracle")
    try:
        with pytest.raises(ForetabError, match="--allow-oracle"):
            create_app(pool, AppSettings(allowed_hosts=TEST_HOSTS))
    finally:
        pool.close()


# -- secrets in errors (item 8): serve --engine timefore ------------------------------------

SECRET_KEY = "sk-served-secret-6666"
URL_SECRET = "sk-served-url-7777"


def test_http_errors_never_show_the_key(web_db: str, monkeypatch) -> None:
    from foretab.llm import OpenAIProvider, load_options
    from foretab.web.pool import agent_factory
    from tests.llm.fake_openai import FakeOpenAIServer, Scripted

    monkeypatch.setenv("FORETAB_LLM_API_KEY", SECRET_KEY)
    server = FakeOpenAIServer()
    server.respond_with(
        lambda body: Scripted(
            status=401, body={"error": {"message": f"bad key {SECRET_KEY} ({URL_SECRET})"}}
        )
    )
    url = f"http://user:{URL_SECRET}@127.0.0.1:{server.port}/v1"
    llm = OpenAIProvider(load_options(base_url=url, model="fake-model", max_retries=0))
    pool = EnginePool(
        banded_factory(web_db),
        size=1,
        default="model",
        agents=("timefore", agent_factory(web_db, llm)),
    )
    try:
        with serving(create_app(pool)) as base:
            question = "Which project in Huangpu District had the highest price in 2020?"
            reply = httpx.post(
                base + "/api/ask", json={"question": question, "engine": "timefore"}, timeout=60
            )
    finally:
        pool.close()
        llm.close()
        server.close()
    assert reply.status_code >= 400, reply.text
    assert "401" in reply.text
    assert SECRET_KEY not in reply.text and URL_SECRET not in reply.text, reply.text
