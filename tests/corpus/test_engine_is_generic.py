"""No module of the question engine names a real-estate word or column (issue 15).

The engine (planner, retriever, SQL, reader, forecaster, analyzer, core types) must work
for any corpus schema: its names for entities, measures and columns come from the store's
``CorpusSchema`` (``foretab/corpus/*.toml``), never from the code. This test walks the
engine's modules with ``ast`` and fails on any identifier (names, attributes, arguments,
keywords, functions, classes, imports) or string constant (docstrings excepted; comments
are not code) holding a real-estate word, and prints ``file:line`` of every offence.

Words match whole words, and snake_case / camelCase parts (``units_sold`` → ``units``,
``sold``), so ``current`` does not match ``rent``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

import foretab

ROOT = Path(foretab.__file__).resolve().parent
ENGINE = ["parse", "retrieve", "sql", "read", "forecast", "analyze", "core", "engine"]
# Wires the TimeFore agents (``foretab.timefore``: the paper's real-estate prompts and tools,
# outside the scan like the rest of that package) into stages.
NOT_SCANNED = {"engine/agents.py"}

# Real-estate words and the real-estate schema's column names (whole words or
# snake_case parts), in English and Chinese.
WORDS_EN = frozenset(
    [
        "city",
        "cities",
        "district",
        "districts",
        "project",
        "projects",
        "price",
        "prices",
        "priced",
        "pricing",
        "home",
        "homes",
        "house",
        "houses",
        "housing",
        "developer",
        "developers",
        "rent",
        "rents",
        "rental",
        "mortgage",
        "estate",
        "estates",
        "apartment",
        "apartments",
        "community",
        "communities",
        "avg_price",
        "units_sold",
        "project_name",
        "project_zh",
        "city_zh",
        "district_zh",
    ]
)
WORDS_ZH = ("房价", "小区", "楼盘", "均价", "成交", "套", "元", "平方米", "区县", "城市", "开发商")

# Text that may stay, each with its reason. Keep this short.
ALLOWED_PHRASES = {
    # A real CLI command: messages name the command that fixes the problem.
    "foretab projects": "the `foretab projects` command lists a store's entities",
    "--district": "its option that filters by the inner level (`foretab projects --district`)",
}
# ``units`` (the plan's role name for the summed measure, Metric.UNITS) is not listed
# above: it is generic, not a real-estate word.


@dataclass(frozen=True, slots=True)
class Offence:
    path: str
    line: int
    kind: str
    text: str
    words: tuple[str, ...]

    def __str__(self) -> str:
        return (
            f"{self.path}:{self.line}: {self.kind} {self.text[:70]!r} names {', '.join(self.words)}"
        )


def _parts(text: str) -> set[str]:
    words: set[str] = set()
    for token in re.findall(r"[A-Za-z_]+", text):
        lowered = token.lower()
        words.add(lowered.strip("_"))
        for part in re.split(r"_+|(?<=[a-z])(?=[A-Z])", token):
            if part:
                words.add(part.lower())
    return words


def real_estate_words(text: str) -> tuple[str, ...]:
    """The listed words ``text`` holds (whole words or identifier parts)."""
    for phrase in ALLOWED_PHRASES:
        text = text.replace(phrase, "")
    found = sorted(_parts(text) & WORDS_EN)
    found += [w for w in WORDS_ZH if w in text]
    return tuple(found)


def _docstrings(tree: ast.AST) -> set[int]:
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, kinds) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _texts(node: ast.AST, docstrings: set[int]) -> list[tuple[str, str]]:
    if isinstance(node, ast.Name):
        return [("name", node.id)]
    if isinstance(node, ast.Attribute):
        return [("attribute", node.attr)]
    if isinstance(node, ast.arg):
        return [("argument", node.arg)]
    if isinstance(node, ast.keyword) and node.arg:
        return [("keyword", node.arg)]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [("definition", node.name)]
    if isinstance(node, ast.alias):
        return [("import", node.name)] + ([("import", node.asname)] if node.asname else [])
    if isinstance(node, ast.ImportFrom) and node.module:
        return [("import", node.module)]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [] if id(node) in docstrings else [("string", node.value)]
    return []


def scan(source: str, path: str) -> list[Offence]:
    """Every offence in one module's source."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    out = []
    for node in ast.walk(tree):
        for kind, text in _texts(node, docstrings):
            words = real_estate_words(text)
            if words:
                out.append(Offence(path, getattr(node, "lineno", 0), kind, text, words))
    return sorted(out, key=lambda o: (o.path, o.line))


def engine_files() -> list[Path]:
    files: list[Path] = []
    for part in ENGINE:
        path = ROOT / part
        files += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return [f for f in files if f.relative_to(ROOT).as_posix() not in NOT_SCANNED]


def test_the_engine_names_no_real_estate_word() -> None:
    offences = [
        o
        for path in engine_files()
        for o in scan(path.read_text(encoding="utf-8"), path.relative_to(ROOT.parent).as_posix())
    ]
    for offence in offences:
        print(offence)
    assert not offences, f"{len(offences)} real-estate words in the engine (printed above)"


def test_the_scan_covers_every_engine_package() -> None:
    files = {p.relative_to(ROOT).parts[0] for p in engine_files()}
    assert files == set(ENGINE)
    assert len(engine_files()) > 40


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ('x = "price"\n', ("price",)),
        ("def f(ref):\n    return ref.city\n", ("city",)),
        ("COLUMN = 'avg_price'\n", ("price",)),
        ("def per_project_value(units_sold):\n    pass\n", ("project", "units_sold")),
        ("from foretab.x import ProjectRef\n", ("project",)),
        ('TEXT = "请问哪个小区的房价最高"\n', ("房价", "小区")),
    ],
)
def test_the_scanner_catches_planted_words(source: str, words: tuple[str, ...]) -> None:
    found = {w for o in scan(source, "planted.py") for w in o.words}
    assert set(words) <= found


def test_the_scanner_spares_docstrings_comments_and_lookalikes() -> None:
    source = (
        '"""Prices of projects in a city: this docstring is prose."""\n'
        "# a comment about districts\n"
        "current = parent = 'recurrent'\n"
        "def f():\n"
        '    """The project\'s price."""\n'
        "    return current\n"
    )
    assert scan(source, "clean.py") == []
