"""Getting code and column lists out of what an LLM wrote (fenced blocks, prose, noise)."""

from __future__ import annotations

import ast
import json
import re

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_CODE_START = re.compile(r"^(?:import |from \S+ import |def answer\b|@)", re.MULTILINE)


def extract_code(reply: str, function: str = "answer") -> str | None:
    """The Python code in ``reply``, or ``None`` when there is none.

    The fenced block defining ``function`` (or any fenced Python block), else the longest
    parseable stretch of prose starting at an import or ``def``.
    """
    blocks = [(lang.lower(), body) for lang, body in _FENCE.findall(reply)]
    python = [body for lang, body in blocks if lang in ("", "python", "py", "python3")]
    for body in python + [b for _, b in blocks]:
        if re.search(rf"\bdef\s+{function}\s*\(", body):
            return _parseable_prefix(body.strip("\n")) or body.strip("\n")
    if python:
        return python[0].strip("\n")
    match = _CODE_START.search(reply)
    if match is None:
        return None
    return _parseable_prefix(reply[match.start() :])


def _parseable_prefix(text: str) -> str | None:
    """The longest run of leading lines that parses (drops trailing prose)."""
    lines = text.splitlines()
    for end in range(len(lines), 0, -1):
        candidate = "\n".join(lines[:end]).rstrip()
        if not candidate:
            continue
        try:
            ast.parse(candidate)
        except SyntaxError:
            continue
        return candidate + "\n"
    return None


def parse_column_list(reply: str, known: tuple[str, ...]) -> list[str] | None:
    """Columns named in the first Python/JSON list of ``reply``; unknown names dropped.

    ``None`` when no list can be read, or nothing in it is a known column: the caller
    falls back to every column.
    """
    by_lower = {name.lower(): name for name in known}
    for match in re.finditer(r"\[[^\[\]]*\]", reply, re.DOTALL):
        text = match.group(0)
        items: object = None
        for parse in (ast.literal_eval, json.loads):
            try:
                items = parse(text)
                break
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
        if not isinstance(items, list | tuple):
            continue
        chosen: list[str] = []
        for item in items:
            name = str(item).strip()
            resolved = name if name in known else by_lower.get(name.lower())
            if resolved is not None and resolved not in chosen:
                chosen.append(resolved)
        if chosen:
            return chosen
    return None
