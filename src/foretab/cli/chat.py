"""``foretab chat``: a conversation at the terminal — follow-ups and numbered choices.

A thin shell over ``foretab.converse.Conversation``: prompt_toolkit reads each line (history
with the arrow keys, line editing; a file of history with ``--history``), the answer, the
question it was read as and any clarifying choices are printed as plain text (names come
from the store: never markup, never raw control characters).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from foretab.cli.common import DbOption, exit_on_error
from foretab.cli.main import app
from foretab.cli.options import engine_options, open_engine
from foretab.cli.safe_text import cell, clean
from foretab.engine.choice import EngineChoice
from foretab.errors import ForetabError

if TYPE_CHECKING:
    from foretab.converse import Conversation, Turn

HELP_TEXT = (
    "Ask a question, then follow it up: 'and next year?', 'what about X?', 'in units?', "
    "'the lowest instead', 'compared with last year', 那明年呢？, 换成销量, 和X比呢？. "
    "When a name has several matches, type the number of a choice (or 'both'). "
    "/new starts a new conversation, /quit (or Ctrl-D) leaves."
)


@app.command()
@exit_on_error
@engine_options
def chat(
    *,
    db: DbOption,
    future: Annotated[
        str,
        typer.Option(
            help="Where future prices come from: 'model' (the store's trained forecaster), "
            "'oracle' (the future store; evaluation only) or 'none' (last observed price).",
        ),
    ] = "model",
    history: Annotated[
        Path | None,
        typer.Option(
            "--history",
            help="Keep the typed lines in this file (the up arrow recalls them next time); "
            "default: in memory for this session only.",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print each turn as one JSON object.")
    ] = False,
    engine: EngineChoice,
) -> None:
    """Talk to a store: a question, then follow-ups that keep what they do not change.

    Each answer shows the full question it was read as ("asked: ..."). A name with several
    matches gives numbered choices; type a number, 'both', or a new question. A follow-up
    that cannot be resolved is refused with the part it misses, and the conversation goes
    on. /new starts over; /quit or Ctrl-D ends.
    """
    if future not in ("model", "oracle", "none"):
        raise typer.BadParameter("use model, oracle or none", param_hint="--future")
    out = Console(highlight=False)
    with open_engine(db, engine, future=future) as built:
        # a hybrid engine asks questions of their own as `ask` does; follow-ups by its rules
        talk = built.conversation()
        if not as_json:
            out.print(cell(HELP_TEXT, "dim"))
        for line in _lines(history):
            text = line.strip()
            if not text:
                continue
            if text in ("/quit", "/exit"):
                break
            if text == "/new":
                talk = built.conversation()
                out.print(cell("(new conversation)", "dim"))
                continue
            if text == "/help":
                out.print(cell(HELP_TEXT, "dim"))
                continue
            _turn(out, talk, text, as_json)


def _turn(out: Console, talk: Conversation, text: str, as_json: bool) -> None:
    try:
        turn = talk.ask(text)
    except ForetabError as error:
        if as_json:
            typer.echo(
                json.dumps(
                    {"conversation_id": talk.id, "error": error.to_dict()}, ensure_ascii=False
                )
            )
        else:
            out.print(cell(f"Error: {error.message}", "red"))
            if error.suggestions:
                out.print(cell("Did you mean: " + "; ".join(error.suggestions)))
        return
    if as_json:
        typer.echo(_turn_json(talk, turn))
        return
    if turn.clarify is not None:
        out.print(cell(turn.clarify.message, "bold"))
        for number, choice in enumerate(turn.clarify.questions, 1):
            out.print(cell(f"  {number}. {choice}"))
        return
    answer = turn.answer
    assert answer is not None
    out.print(cell(answer.text, "bold"))
    out.print(cell(f"asked: {turn.asked}", "dim"))
    out.print(cell(f"answer: {json.dumps(answer.answer, ensure_ascii=False)}"))


def _turn_json(talk: Conversation, turn: Turn) -> str:
    from foretab.core.schema import dumps_plain

    doc: dict[str, object] = {"conversation_id": talk.id, "said": turn.said, "asked": turn.asked}
    if turn.clarify is not None:
        doc["clarify"] = turn.clarify.to_dict()
    elif turn.answer is not None:
        doc["answer"] = turn.answer.to_doc().model_dump(mode="json")
    return dumps_plain(doc, ensure_ascii=False)


def _lines(history: Path | None) -> Iterator[str]:
    """Typed lines until Ctrl-D: prompt_toolkit on a terminal, plain lines from a pipe."""
    if not sys.stdin.isatty():
        for line in sys.stdin:
            yield clean(line.rstrip("\n"))
        return
    prompt = _prompt(history)
    while True:
        try:
            yield clean(prompt())
        except KeyboardInterrupt:  # Ctrl-C drops the line being typed, as in a shell
            continue
        except EOFError:
            return


def _prompt(history: Path | None) -> Callable[[], str]:
    from foretab.extras import require

    require("prompt_toolkit", "chat")
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    session: PromptSession[str] = PromptSession(
        history=FileHistory(str(history)) if history is not None else InMemoryHistory()
    )
    return lambda: session.prompt("foretab> ")
