"""Every command is documented: it has --help text and the README names it."""

from __future__ import annotations

import re
from pathlib import Path

import typer
from typer.testing import CliRunner

from foretab.cli.main import _register, app

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def commands() -> list[tuple[str, ...]]:
    _register()
    group = typer.main.get_group(app)
    found: list[tuple[str, ...]] = []
    for name, command in group.commands.items():
        sub = getattr(command, "commands", None)
        if sub:
            found += [(name, child) for child in sub]
        else:
            found.append((name,))
    return found


def test_there_are_commands() -> None:
    names = {" ".join(c) for c in commands()}
    assert {
        "ingest",
        "tables",
        "sql",
        "ask",
        "demo",
        "train",
        "bench forecast",
        "bench run",
    } <= names


def test_every_command_has_help_and_is_in_the_readme() -> None:
    runner = CliRunner()
    undocumented = []
    for command in commands():
        result = runner.invoke(app, [*command, "--help"])
        assert result.exit_code == 0, result.output
        assert len(result.output.strip().splitlines()) > 3, f"{command} has no help text"
        last = command[-1]
        pattern = (
            rf"foretab {' '.join(command)}\b"
            if len(command) == 1
            else rf"foretab bench [^`]*\b{last}\b"
        )
        if not re.search(pattern, README):
            undocumented.append(" ".join(command))
    assert not undocumented, f"commands missing from README.md: {undocumented}"
