"""Every command is documented: it has --help text and the README or docs/ names it.

The documentation site (``mkdocs.yml``, ``docs/``) builds with ``mkdocs build --strict``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from foretab.cli.main import app, register_commands

ROOT = Path(__file__).resolve().parents[1]
#: README.md and every page of the documentation site
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
DOCS = "\n".join(path.read_text(encoding="utf-8") for path in DOC_FILES)


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


def test_every_command_has_help_and_is_in_the_docs() -> None:
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
        if not re.search(pattern, DOCS):
            undocumented.append(" ".join(command))
    assert not undocumented, f"commands missing from README.md and docs/: {undocumented}"


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
        known[path] = {
            opt
            for param in command.params
            for opt in (*param.opts, *param.secondary_opts)  # --no-train beside --train
            if opt.startswith("-")
        }
        known[path] |= {"--help"}
    return known


def _mentions() -> list[tuple[str, str]]:
    found = []
    for file in [*sorted(SRC.rglob("*.py")), *DOC_FILES]:
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


def test_readme_is_short_and_points_into_the_docs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / link).is_file(), f"README.md links to a missing page: {link}"


#: how the code cited the design when it lived outside the repository
OUTSIDE = "DESIGN" + " §"


def test_design_references_resolve_inside_the_repository() -> None:
    design = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    sections = set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)[. ]", design, flags=re.MULTILINE))
    cited = []
    code = [*SRC.rglob("*.py"), *(ROOT / "tests").rglob("*.py"), *(ROOT / "scripts").rglob("*")]
    for file in [*sorted(code), *DOC_FILES]:
        text = file.read_text(encoding="utf-8")
        assert OUTSIDE not in text, f"{file.name} cites the design outside the repository"
        cited += [
            (file.name, n) for n in re.findall(r"design(?:\.md)?\]?\s+§(\d+(?:\.\d+)?)", text)
        ]
    assert cited
    missing = [f"{name}: §{n}" for name, n in cited if n not in sections]
    assert not missing, f"sections not in docs/design.md: {missing}"


@pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None,
    reason="mkdocs is not installed (the [docs] extra: pip install -e '.[docs]')",
)
def test_the_site_builds_strict(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
         "-f", str(ROOT / "mkdocs.yml"), "-d", str(tmp_path / "site")],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "index.html").is_file()
