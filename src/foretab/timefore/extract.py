"""Pull what an agent needs out of real LLM replies: lists, SQL, JSON, in prose or fences.

Models wrap answers in ```fences```, prefix them with "Sure! Here is", append an
explanation, emit ``<think>`` blocks, or write Python tuples where JSON was asked for.
Each function here returns ``None`` when nothing usable is in the text, so the agent can
ask again (a bounded retry) instead of guessing.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator

Cell = str | float

_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n?(.*?)(?:```|$)", re.DOTALL)
_CAPTION = re.compile(r"Project Price Table for [^\"\]\n]+?,\s*\d{4}", re.IGNORECASE)
# An apostrophe inside a word ("Bao'an") in a single-quoted Python string literal.
_INWORD_QUOTE = re.compile(r"(?<=[A-Za-z])'(?=[A-Za-z])")
_SQL_SHAPE = r"\b(?:SELECT\b[\s\S]+?\bFROM\b|WITH\s+\w+\s+AS\s*\()"
# Upper-case keywords first: "I will select the rows from..." is prose, not SQL.
_SQL_STARTS = (re.compile(_SQL_SHAPE), re.compile(_SQL_SHAPE, re.IGNORECASE))
_REFUSAL = re.compile(
    r"\b(I can(?:'|no)t|I am unable|I'm unable|I cannot|as an AI|I won't|I will not)\b",
    re.IGNORECASE,
)


def clean(text: str | None) -> str:
    """The reply without reasoning blocks and surrounding whitespace."""
    return _THINK.sub("", text or "").strip()


def looks_like_refusal(text: str) -> bool:
    """Whether a reply reads as a refusal rather than an attempt."""
    return bool(_REFUSAL.search(text[:400]))


def after_label(text: str, labels: tuple[str, ...]) -> str:
    """The text after the last ``<Label>:`` of ``labels`` (or all of it)."""
    best = -1
    for label in labels:
        for match in re.finditer(re.escape(label) + r"\s*:?", text, re.IGNORECASE):
            best = max(best, match.end())
    return text[best:] if best >= 0 else text


def _balanced(text: str, start: int, open_ch: str, close_ch: str) -> str | None:
    """The bracketed span starting at ``start``, respecting quoted strings."""
    depth, quote, escaped = 0, "", False
    for i in range(start, len(text)):
        ch = text[i]
        # An apostrophe inside a word ("Bao'an") neither opens nor closes a quote.
        inword = ch == "'" and i > 0 and text[i - 1].isalnum() and text[i + 1 : i + 2].isalnum()
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote and not inword:
                quote = ""
            continue
        if ch in "'\"":
            if inword:
                continue
            quote = ch
        elif ch == open_ch:
            depth += 1
        elif ch == close_ch:
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return None


def _literal(span: str) -> object | None:
    repaired = _INWORD_QUOTE.sub("\\'", span)
    attempts = [(json.loads, span), (ast.literal_eval, span), (ast.literal_eval, repaired)]
    for loader, text in attempts:
        try:
            return loader(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return None


def literals(text: str, open_ch: str = "[", close_ch: str = "]") -> Iterator[object]:
    """Every JSON / Python literal bracketed by ``open_ch`` in ``text``, outermost first."""
    i = 0
    while True:
        start = text.find(open_ch, i)
        if start < 0:
            return
        span = _balanced(text, start, open_ch, close_ch)
        if span is None:
            i = start + 1
            continue
        value = _literal(span)
        if value is not None:
            yield value
            i = start + len(span)
        else:
            i = start + 1


def extract_captions(text: str | None) -> list[str] | None:
    """Table captions from a summary reply: a list literal, else caption-shaped lines."""
    body = after_label(clean(text), ("<Summary>",))
    for value in literals(body):
        if isinstance(value, list | tuple) and value and all(isinstance(v, str) for v in value):
            captions = [v.strip() for v in value if v.strip()]
            if captions:
                return captions
    found = [m.group(0).strip() for m in _CAPTION.finditer(body)]
    return list(dict.fromkeys(found)) or None


def _sql_in(value: object, depth: int = 0) -> str | None:
    if not isinstance(value, dict) or depth > 3:
        return None
    for key in ("sql", "sql_statement", "query", "SQL"):
        if isinstance(value.get(key), str) and value[key].strip():
            return str(value[key]).strip()
    # A tool call written as text: {"name": "sqlQueryTool", "arguments": {...}}.
    for key in ("arguments", "parameters", "input"):
        found = _sql_in(value.get(key), depth + 1)
        if found:
            return found
    return None


def text_tool_calls(text: str | None, names: tuple[str, ...]) -> list[tuple[str, str]]:
    """Tool calls a model wrote as text (no native tool calling): ``(name, arguments JSON)``.

    Recognises ``{"name": "tool", "arguments": {...}}`` anywhere in the reply (bare, fenced
    or inside ``<tool_call>`` tags), with ``parameters`` accepted for ``arguments``.
    """
    out = []
    for value in literals(clean(text), "{", "}"):
        if not isinstance(value, dict) or value.get("name") not in names:
            continue
        args = value.get("arguments", value.get("parameters", {}))
        if isinstance(args, str):
            out.append((str(value["name"]), args))
        else:
            out.append((str(value["name"]), json.dumps(args, ensure_ascii=False)))
    return out


def _sql_from_json(text: str) -> str | None:
    for value in literals(text, "{", "}"):
        found = _sql_in(value)
        if found:
            return found
    # The paper's own output format: "sql": "<statement>" without braces.
    match = re.search(r'"sql"\s*:\s*"((?:[^"\\]|\\.)*)"', text, re.DOTALL | re.IGNORECASE)
    if match:
        try:
            return str(json.loads(f'"{match.group(1)}"')).strip() or None
        except json.JSONDecodeError:
            return match.group(1).strip() or None
    return None


def _sql_from_prose(text: str) -> str | None:
    match = _SQL_STARTS[0].search(text) or _SQL_STARTS[1].search(text)
    if match is None:
        return None
    body = text[match.start() :]
    end = body.find(";")
    statement = body[: end + 1] if end >= 0 else body.split("\n\n")[0]
    return statement.strip() or None


def extract_sql(text: str | None) -> str | None:
    """The SQL statement of a reply: JSON ``{"sql": ...}``, a fenced block, or bare SQL."""
    body = clean(text)
    if not body:
        return None
    from_json = _sql_from_json(body)
    if from_json:
        return from_json
    for match in _FENCE.finditer(body):
        lang, inner = match.group(1).lower(), match.group(2)
        if lang == "json":
            inner_sql = _sql_from_json(inner)
            if inner_sql:
                return inner_sql
        sql = _sql_from_prose(inner)
        if sql:
            return sql
    return _sql_from_prose(body)


def _cell(value: object) -> Cell | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        number = text.replace(",", "")
        try:
            return float(number)
        except ValueError:
            return text if text else None
    return None


def as_answer(value: object) -> list[list[Cell]] | None:
    """An ODTQA-FoRe answer list (``[[...], ...]``) from a parsed literal, else ``None``."""
    if not isinstance(value, list | tuple) or not value:
        return None
    rows: list[list[Cell]] = []
    for row in value:
        items = row if isinstance(row, list | tuple) else [row]
        cells = [_cell(v) for v in items]
        if not cells or any(c is None for c in cells):
            return None
        rows.append([c for c in cells if c is not None])
    return rows


def extract_answer(text: str | None, labels: tuple[str, ...] = ()) -> list[list[Cell]] | None:
    """The first answer list in a reply (after the last of ``labels`` when present)."""
    body = after_label(clean(text), labels) if labels else clean(text)
    for value in literals(body):
        answer = as_answer(value)
        if answer is not None:
            return answer
    return None
