"""Options and error handling shared by the CLI commands."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Annotated, ParamSpec, TypeVar

import typer

from foretab.core.months import Month
from foretab.errors import ForetabError

P = ParamSpec("P")
R = TypeVar("R")

DbOption = Annotated[
    str,
    typer.Option(
        "--db",
        help="Store: a DuckDB file (future store = sibling *.future.duckdb) or a "
        "postgresql://user@host:port/NAME URL (future store = database NAME_future).",
    ),
]

ERROR_EXIT_CODE = 2


def exit_on_error(func: Callable[P, R]) -> Callable[P, R]:
    """Turn ``ForetabError`` into exit code 2 with the message on stderr.

    With ``--json`` (``as_json=True``) the error is also printed on stdout as
    ``{"error": {"type", "message", "suggestions"}}`` so scripts can read it.
    """

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except ForetabError as exc:
            report_error(exc, as_json=bool(kwargs.get("as_json")))
            raise typer.Exit(ERROR_EXIT_CODE) from None

    return wrapper


def report_error(exc: ForetabError, *, as_json: bool) -> None:
    """Print an error for a person (stderr) and, with --json, for a program (stdout)."""
    from foretab.cli.safe_text import clean
    from foretab.llm.redact import mask

    # Messages quote names from stores and questions: no raw control characters; and
    # never a configured secret (the API key, --llm-base-url credentials).
    print(f"Error: {mask(clean(exc.message))}", file=sys.stderr)
    if exc.suggestions:
        print("Did you mean: " + mask(clean("; ".join(exc.suggestions))), file=sys.stderr)
    if as_json:
        doc: dict[str, object] = {"error": exc.to_dict()}
        steps = getattr(exc, "steps", None)
        if steps:  # an LLM engine's prompts, replies and tool calls up to the failure
            doc["steps"] = steps
        from foretab.core.schema import dumps_plain

        print(mask(dumps_plain(doc, ensure_ascii=False)))


def parse_month_option(value: str | None, option: str) -> Month | None:
    """A ``YYYY-MM`` option value, or a clear usage error."""
    if value is None:
        return None
    try:
        return Month.parse(value)
    except ValueError:
        raise typer.BadParameter(
            f"{value!r} is not a month; use YYYY-MM, e.g. 2021-12.", param_hint=option
        ) from None
