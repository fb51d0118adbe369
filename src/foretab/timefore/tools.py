"""The agents' tool loop: one turn of asking with a tool, running its calls, answering them.

The SQL agent (``sqlQueryTool``) and the Forecaster (``imputationThenPredictionTool``) both
ask the LLM with one tool offered, run every call in its reply — native tool calls, or
calls written in the reply's text by servers without function calling — record each in
the trace, and send each result back as the next message. They differ only in what a
call does and in when they stop, which stays with them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from foretab.errors import ForetabError
from foretab.llm import ChatMessage, ChatReply, ToolCall, ToolSpec
from foretab.timefore.extract import text_tool_calls
from foretab.timefore.session import AgentSession, Conversation

T = TypeVar("T")


@dataclass(frozen=True)
class ToolResult(Generic[T]):
    """One call's outcome: ``text`` goes back to the LLM, ``value`` stays with the agent.

    ``value`` is None when the call gave the agent nothing to keep; ``ran`` says whether
    the tool ran (the trace's ``ok``), which a call can do without giving a value.
    """

    text: str
    value: T | None = None
    ran: bool = False


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


def tool_turn(
    session: AgentSession,
    agent: str,
    conversation: Conversation,
    tool: ToolSpec,
    run: Callable[[ToolCall], ToolResult[T]],
    *,
    purpose: str,
    iteration: int,
) -> tuple[ChatReply, list[ToolResult[T]]]:
    """Ask with ``tool`` offered, then ``run`` each call of the reply and answer it.

    A ``ForetabError`` from ``run`` becomes the call's result ("Error: …"), so the LLM can
    repair the call. No calls: the reply is the agent's to read (an answer, or nothing).
    """
    reply = session.chat(agent, conversation, purpose=purpose, tools=[tool], tool_choice="auto")
    conversation.add_reply(reply)
    calls, native = tool_calls_of(reply, tool.name, iteration)
    results: list[ToolResult[T]] = []
    for call in calls:
        started = time.perf_counter()
        try:
            result = run(call)
        except ForetabError as error:
            result = ToolResult(f"Error: {error.message}")
        seconds = time.perf_counter() - started
        session.tool(agent, call.name, call.arguments, result.text, result.ran, seconds)
        conversation.add(tool_message(call, result.text, native))
        results.append(result)
    return reply, results
