"""The provider through the real ``openai`` client against the fake server (real HTTP)."""

from __future__ import annotations

import time

import pytest

from foretab.llm import (
    CallBudget,
    ChatMessage,
    LLMBudgetExceeded,
    LLMConfigError,
    LLMConnectionError,
    LLMHTTPError,
    LLMReplayMiss,
    LLMReplyError,
    LLMTimeoutError,
    OpenAIProvider,
    ReplayProvider,
    ResponseCache,
    ToolSpec,
    TranscriptRecorder,
    make_provider,
)

HELLO = [ChatMessage.system("be brief"), ChatMessage.user("hello")]


def test_reply_text_tokens_and_request_body(fake_openai) -> None:
    fake_openai.reply("hi there", usage=(30, 4))
    llm = fake_openai.provider(temperature=0.2, max_tokens=64)
    reply = llm.chat(HELLO, purpose="greeting")
    assert reply.text == "hi there"
    assert reply.call.usage.prompt_tokens == 30
    assert reply.call.usage.completion_tokens == 4
    assert reply.call.usage.total_tokens == 34
    assert reply.call.source == "http" and reply.call.attempts == 1
    assert reply.call.purpose == "greeting" and reply.call.elapsed_s > 0
    body = fake_openai.requests[0]
    assert body["model"] == "fake-model"
    assert body["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hello"},
    ]
    assert body["temperature"] == 0.2 and body["max_tokens"] == 64


def test_tool_calls_round_trip(fake_openai) -> None:
    fake_openai.tool_call("sqlQueryTool", {"sql": "SELECT 1"})
    fake_openai.reply("done")
    tool = ToolSpec(
        name="sqlQueryTool",
        description="run SQL",
        parameters={"type": "object", "properties": {"sql": {"type": "string"}}},
    )
    llm = fake_openai.provider()
    first = llm.chat(HELLO, tools=[tool], tool_choice="auto")
    (call,) = first.tool_calls
    assert call.name == "sqlQueryTool" and call.parsed_arguments() == {"sql": "SELECT 1"}
    assert first.finish_reason == "tool_calls"
    follow = [*HELLO, ChatMessage.assistant(None, first.tool_calls)]
    follow.append(ChatMessage.tool_result(call.id, "[[1]]"))
    assert llm.chat(follow, tools=[tool]).text == "done"
    sent = fake_openai.requests[1]
    assert sent["tools"][0]["function"]["name"] == "sqlQueryTool"
    assert sent["messages"][-2]["tool_calls"][0]["function"]["arguments"] == '{"sql": "SELECT 1"}'
    assert sent["messages"][-1] == {"role": "tool", "content": "[[1]]", "tool_call_id": call.id}


def test_malformed_tool_arguments_are_a_clear_error(fake_openai) -> None:
    fake_openai.tool_call("f", "{not json")
    reply = fake_openai.provider().chat(HELLO, tools=[ToolSpec(name="f")])
    with pytest.raises(LLMReplyError, match="not JSON"):
        reply.tool_calls[0].parsed_arguments()


def test_retries_500_then_succeeds(fake_openai) -> None:
    fake_openai.error(500).error(503).reply("ok")
    reply = fake_openai.provider(max_retries=3).chat(HELLO)
    assert reply.text == "ok"
    assert reply.call.attempts == 3
    assert reply.call.retry_reasons == ("HTTP 500", "HTTP 503")
    assert len(fake_openai.requests) == 3


def test_retries_run_out(fake_openai) -> None:
    fake_openai.error(500).error(500).error(500)
    with pytest.raises(LLMHTTPError, match="HTTP 500") as info:
        fake_openai.provider(max_retries=2).chat(HELLO)
    assert info.value.status == 500
    assert len(fake_openai.requests) == 3


def test_429_honours_retry_after(fake_openai) -> None:
    fake_openai.error(429, retry_after=0.3).reply("ok")
    started = time.perf_counter()
    reply = fake_openai.provider(max_backoff_s=1.0).chat(HELLO)
    assert reply.text == "ok" and reply.call.attempts == 2
    assert time.perf_counter() - started >= 0.3


def test_client_errors_are_not_retried(fake_openai) -> None:
    fake_openai.error(404, "model not found").reply("never")
    with pytest.raises(LLMHTTPError, match="--llm-base-url"):
        fake_openai.provider().chat(HELLO)
    assert len(fake_openai.requests) == 1


def test_timeout_then_retry_succeeds(fake_openai) -> None:
    fake_openai.reply("slow", delay_s=1.0).reply("fast")
    reply = fake_openai.provider(timeout_s=0.3, max_retries=1).chat(HELLO)
    assert reply.text == "fast"
    assert reply.call.retry_reasons == ("timeout after 0.3 s",)


def test_timeout_is_a_clear_error(fake_openai) -> None:
    fake_openai.reply("slow", delay_s=1.0)
    started = time.perf_counter()
    with pytest.raises(LLMTimeoutError, match=r"did not answer within 0\.3 s"):
        fake_openai.provider(timeout_s=0.3, max_retries=0).chat(HELLO)
    assert time.perf_counter() - started < 0.9


def test_garbage_body_is_an_error_not_a_crash(fake_openai) -> None:
    fake_openai.garbage("<html>oops</html>")
    with pytest.raises((LLMReplyError, LLMHTTPError, LLMConnectionError)):
        fake_openai.provider(max_retries=0).chat(HELLO)


def test_no_server_is_a_connection_error() -> None:
    from tests.llm.fake_openai import FakeOpenAIServer

    server = FakeOpenAIServer()
    options = server.options(max_retries=1)
    server.close()
    with pytest.raises(LLMConnectionError, match="is it running"):
        OpenAIProvider(options).chat(HELLO)


def test_budget_exhaustion_sends_nothing_more(fake_openai) -> None:
    fake_openai.replies("a", "b", "c")
    llm = fake_openai.provider()
    budget = CallBudget(2)
    llm.chat(HELLO, budget=budget)
    llm.chat(HELLO, budget=budget)
    with pytest.raises(LLMBudgetExceeded, match="budget of 2"):
        llm.chat(HELLO, budget=budget, purpose="fixer")
    assert len(fake_openai.requests) == 2 and budget.remaining == 0


def test_cache_hit_costs_no_request(fake_openai, tmp_path) -> None:
    fake_openai.reply("cached answer")
    cache_path = tmp_path / "llm.sqlite"
    llm = OpenAIProvider(fake_openai.options(), cache=ResponseCache(cache_path))
    first = llm.chat(HELLO)
    # A new provider on the same file: a rerun of a benchmark.
    with OpenAIProvider(fake_openai.options(), cache=ResponseCache(cache_path)) as rerun:
        again = rerun.chat(HELLO)
    assert again.text == first.text == "cached answer"
    assert again.call.source == "cache" and again.call.attempts == 0
    assert again.call.usage == first.call.usage
    assert len(fake_openai.requests) == 1
    # Any change in the request is a miss.
    fake_openai.reply("other")
    assert llm.chat(HELLO, temperature=0.5).text == "other"
    assert len(fake_openai.requests) == 2


def test_record_then_replay_without_server(fake_openai, tmp_path) -> None:
    fake_openai.reply("recorded")
    transcript = tmp_path / "t.jsonl"
    options = fake_openai.options()
    llm = make_provider(options, record=transcript)
    assert llm.chat(HELLO).text == "recorded"
    fake_openai.close()  # replay must not need the server
    replay = ReplayProvider(transcript, options)
    reply = replay.chat(HELLO)
    assert reply.text == "recorded" and reply.call.source == "replay"
    assert len(fake_openai.requests) == 1
    with pytest.raises(LLMReplayMiss, match="re-record"):
        replay.chat([ChatMessage.user("something else")])


def test_recorder_appends_one_line_per_call(fake_openai, tmp_path) -> None:
    fake_openai.replies("a", "b")
    path = tmp_path / "rec.jsonl"
    llm = OpenAIProvider(fake_openai.options(), recorder=TranscriptRecorder(path))
    llm.chat(HELLO)
    llm.chat([ChatMessage.user("two")])
    assert len(path.read_text().splitlines()) == 2


def test_provider_needs_an_endpoint() -> None:
    from foretab.llm import LLMOptions

    with pytest.raises(LLMConfigError, match="--llm-base-url"):
        OpenAIProvider(LLMOptions(model="m"))
