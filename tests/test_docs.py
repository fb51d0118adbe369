"""Every command is documented: it has --help text and the README names it."""

from __future__ import annotations

import re
from pathlib import Path

import typer
from typer.testing import CliRunner

from foretab.cli.main import app, register_commands

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def commands() -> list[tuple[str, ...]]:
    register_commands()
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


SRC = Path(__file__).resolve().parents[1] / "src" / "foretab"
# `foretab word word --option ...` inside backticks, in code (messages, docstrings) and docs.
MENTION = re.compile(r"`foretab ([^`]+)`")


def _command_options() -> dict[tuple[str, ...], set[str]]:
    register_commands()
    group = typer.main.get_group(app)
    known: dict[tuple[str, ...], set[str]] = {}
    for path in commands():
        command = group
        for part in path:
            command = command.commands[part]  # type: ignore[attr-defined]
        known[path] = {opt for param in command.params for opt in param.opts if opt.startswith("-")}
        known[path] |= {"--help"}
    return known


def _mentions() -> list[tuple[str, str]]:
    found = []
    for file in [*sorted(SRC.rglob("*.py")), Path(__file__).resolve().parents[1] / "README.md"]:
        for match in MENTION.finditer(file.read_text(encoding="utf-8")):
            found.append((file.name, match.group(1)))
    return found


def test_every_mentioned_command_and_option_exists() -> None:
    known = _command_options()
    wrong = []
    for where, text in _mentions():
        words = text.split()
        # "bench forecast|impute|corpus" names three commands at once.
        heads = [w for w in words if not w.startswith("-")]
        depth = 2 if heads[:1] == ["bench"] else 1
        if not heads and set(words) <= {"--help"}:
            continue
        if len(heads) < depth:
            wrong.append(f"{where}: `foretab {text}` names no command")
            continue
        alternatives = [(*heads[: depth - 1], name) for name in heads[depth - 1].split("|")]
        for path in alternatives:
            if tuple(path) not in known:
                wrong.append(f"{where}: `foretab {text}` names no command {' '.join(path)!r}")
                continue
            for word in words:
                option = word.split("=", 1)[0]
                if option.startswith("--") and option not in known[tuple(path)]:
                    wrong.append(f"{where}: `foretab {text}`: {option} is not an option")
    assert not wrong, "\n".join(wrong)
