"""One question's LLM session: the call budget, the trace steps and the usage totals.

Every agent of an LLM engine talks to the model through the same ``AgentSession``, so a
question's calls share one budget (``max_calls_per_question``) and every prompt, reply,
tool call and retry lands in the trace in the order it happened. The engine calls
``begin()`` when a question starts (the planner does) and ``take_steps()`` after each stage.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from foretab.core.trace import LLMCallStep, LLMMessage, RetryStep, Step, ToolCallStep
from foretab.llm import CallBudget, ChatMessage, ChatReply, LLMProvider, ToolSpec
from foretab.timefore.errors import AgentError

#: Calls per question when the LLM options do not set ``max_calls_per_question``: room for
#: the SQL repair loop (25 iterations) plus the caption, forecaster and analyzer calls.
DEFAULT_MAX_CALLS = 60


@dataclass(frozen=True, slots=True)
class LLMUsage:
    """What one question cost: calls, tokens and seconds spent waiting for the LLM."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    def plus(self, step: LLMCallStep) -> LLMUsage:
        return LLMUsage(
            self.calls + 1,
            self.prompt_tokens + step.prompt_tokens,
            self.completion_tokens + step.completion_tokens,
            self.seconds + step.seconds,
        )


class Conversation:
    """The messages of one agent's chat, and how many were already recorded in the trace."""

    def __init__(self, messages: Sequence[ChatMessage] = ()) -> None:
        self.messages: list[ChatMessage] = list(messages)
        self.recorded = 0

    def add(self, message: ChatMessage) -> None:
        self.messages.append(message)

    def add_reply(self, reply: ChatReply) -> None:
        self.messages.append(ChatMessage.assistant(reply.content, reply.tool_calls))


def _message(message: ChatMessage) -> LLMMessage:
    content = message.content or ""
    if message.tool_calls:
        calls = "; ".join(f"{c.name}({c.arguments})" for c in message.tool_calls)
        content = f"{content}\n[tool calls] {calls}".strip()
    if message.role == "tool":
        content = f"[{message.tool_call_id}] {content}"
    return LLMMessage(message.role, content)


class AgentSession:
    """Talks to ``llm`` for the agents of one engine, one question at a time."""

    def __init__(self, llm: LLMProvider, *, max_calls: int | None = None) -> None:
        self.llm = llm
        options = llm.options
        if max_calls is None:
            # The table-QA default (8) is too small for the SQL repair loop; an explicit
            # max_calls_per_question (flag or config file) is honoured as the user's cap.
            explicit = "max_calls_per_question" in options.model_fields_set
            max_calls = options.max_calls_per_question if explicit else DEFAULT_MAX_CALLS
        self.max_calls = max_calls
        self.budget = CallBudget(max_calls)
        self.usage = LLMUsage()
        self._steps: list[Step] = []
        #: every step of the current question (kept for the error report when it fails)
        self.question_steps: list[Step] = []

    @property
    def model(self) -> str:
        return self.llm.model

    def begin(self) -> None:
        """A new question: a fresh budget, no steps, zero usage."""
        self.budget = CallBudget(self.max_calls)
        self.usage = LLMUsage()
        self._steps = []
        self.question_steps = []

    def _record(self, step: Step) -> None:
        self._steps.append(step)
        self.question_steps.append(step)

    def take_steps(self) -> tuple[Step, ...]:
        """The steps recorded since the last call (each handed over once)."""
        steps, self._steps = tuple(self._steps), []
        return steps

    def chat(
        self,
        agent: str,
        conversation: Conversation,
        *,
        purpose: str,
        tools: Sequence[ToolSpec] = (),
        tool_choice: str | None = None,
    ) -> ChatReply:
        """One call in ``conversation``; recorded in the trace whatever the outcome."""
        new = tuple(_message(m) for m in conversation.messages[conversation.recorded :])
        started = time.perf_counter()
        try:
            reply = self.llm.chat(
                conversation.messages,
                tools=list(tools) or None,
                tool_choice=tool_choice,
                budget=self.budget,
                purpose=f"{agent}: {purpose}",
            )
        except Exception as error:
            self._record(
                RetryStep(agent, time.perf_counter() - started, f"LLM call failed: {error}", 0)
            )
            raise
        conversation.recorded = len(conversation.messages)
        call = reply.call
        step = LLMCallStep(
            implementation=agent,
            seconds=call.elapsed_s,
            purpose=purpose,
            model=call.model,
            messages=new,
            reply=reply.text,
            tool_calls=tuple(f"{c.name}({c.arguments})" for c in reply.tool_calls),
            finish_reason=reply.finish_reason,
            prompt_tokens=call.usage.prompt_tokens,
            completion_tokens=call.usage.completion_tokens,
            attempts=call.attempts,
            retry_reasons=call.retry_reasons,
            source=call.source,
        )
        self._record(step)
        self.usage = self.usage.plus(step)
        return reply

    def tool(
        self, agent: str, name: str, arguments: str, result: str, ok: bool, seconds: float
    ) -> None:
        self._record(ToolCallStep(agent, seconds, name, arguments, result, ok))

    def retry(self, agent: str, reason: str, attempt: int) -> None:
        self._record(RetryStep(agent, 0.0, reason, attempt))


def ask_until(
    session: AgentSession,
    agent: str,
    conversation: Conversation,
    *,
    purpose: str,
    parse: object,
    reminder: str,
    retries: int,
) -> tuple[object, ChatReply]:
    """Ask, parse the reply; on an unusable reply say why and ask again (``retries`` times).

    ``parse(text)`` returns the value or ``None``; the final failure is an ``AgentError``
    quoting the last reply.
    """
    from foretab.timefore.extract import clean, looks_like_refusal

    assert callable(parse)
    last, why = "", ""
    for attempt in range(retries + 1):
        reply = session.chat(agent, conversation, purpose=purpose)
        text = clean(reply.text)
        value = parse(reply.text) if text else None
        if value is not None:
            return value, reply
        last = text
        why = (
            "the reply was cut off at max_tokens (raise max_tokens in the LLM config)"
            if reply.finish_reason == "length"
            else "the reply was empty"
            if not text
            else "the reply was a refusal"
            if looks_like_refusal(text)
            else "the reply had no usable answer"
        )
        if attempt == retries:
            break
        session.retry(agent, f"{why}: {text[:200]!r}", attempt + 1)
        conversation.add_reply(reply)
        conversation.add(ChatMessage.user(f"{why.capitalize()}. {reminder}"))
    raise AgentError(
        f"the {agent} agent got no usable reply from the LLM after {retries + 1} attempt(s): "
        f"{why} (last reply: {last[:200]!r}); check that --llm-model can follow the prompt, "
        "or use --engine rules"
    )
