"""One check for statements that differ only in which catalog tables they read.

The engine reads a district's year tables with a handful of statement shapes: the same
text with other table names (``project_price_table_huadu_district_guangzhou_2021``
instead of ``…_tianhe_district_guangzhou_2021``). A session's verdicts are keyed by the
exact text (``foretab.sql.worker``), so every new district or year range was checked
afresh: sqlglot's parse, the rules and the render cost 1.5 ms for a history read and
3.5 ms for a scope read, a quarter of the QA test split's reads.

A *shape* is the statement's token sequence with each catalog table name replaced by its
order of first appearance. Every rule of the check (``foretab.sql.rules``) treats two
catalog table names alike: both are allowed, both are reserved (no CTE may take either),
neither is a path, a system name or a function, and the parser reads a token sequence the
same whatever identifier text it carries. So a statement of a known shape gets the verdict
a fresh check would give: allowed, with the known checked text with its own names put
back. Only plain lower-case catalog names (``foretab.store.naming.is_table_name``) written
as bare identifiers and not called as functions are replaced; a statement with comments,
or whose checked text holds one of its names in any other form, has no shape and is
checked afresh. Refusals never make a shape (only allowed verdicts are learnt).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import Token, TokenType

from foretab.core.recent import Recent
from foretab.store.naming import is_table_name

#: Shapes a session remembers (least recent dropped).
SHAPE_CACHE_SIZE = 256

#: A token of a shape: its type and text, or its type and the index of a table name.
ShapeToken = tuple[TokenType, str | int]


@dataclass(frozen=True, slots=True)
class Shape:
    """A statement's tokens with its catalog tables numbered, and those tables in order."""

    tokens: tuple[ShapeToken, ...]
    names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Template:
    """A checked text cut at its table names: text, index, text, index, …, text."""

    parts: tuple[str | int, ...]
    placeholders: int

    def fill(self, names: tuple[str, ...]) -> str:
        return "".join(p if isinstance(p, str) else names[p] for p in self.parts)


def _tokens(sql: str, dialect: str) -> list[Token] | None:
    try:
        return Dialect.get_or_raise(dialect).tokenize(sql)
    except Exception:  # sqlglot raises assorted errors on odd text: no shape, a full check
        return None


def _is_catalog_name(tokens: list[Token], i: int, allowed: Collection[str]) -> bool:
    token = tokens[i]
    if token.token_type is not TokenType.VAR or not is_table_name(token.text):
        return False
    called = i + 1 < len(tokens) and tokens[i + 1].token_type is TokenType.L_PAREN
    return not called and token.text in allowed


def shape_of(sql: str, dialect: str, allowed: Collection[str]) -> Shape | None:
    """``sql``'s shape under the session's ``allowed`` tables; None if it names none."""
    tokens = _tokens(sql, dialect)
    if not tokens or any(t.comments for t in tokens):
        return None
    names: dict[str, int] = {}
    shaped: list[ShapeToken] = []
    for i, token in enumerate(tokens):
        if _is_catalog_name(tokens, i, allowed):
            shaped.append((token.token_type, names.setdefault(token.text, len(names))))
        else:
            shaped.append((token.token_type, token.text))
    if not names:
        return None  # nothing to share: the exact-text verdicts serve it
    return Shape(tuple(shaped), tuple(names))


class ShapeBook:
    """A session's allowed shapes and their checked texts, per row cap."""

    def __init__(self, dialect: str, size: int = SHAPE_CACHE_SIZE) -> None:
        self.dialect = dialect
        self._templates: Recent[tuple[tuple[ShapeToken, ...], int], _Template] = Recent(size)

    def learn(self, shape: Shape, max_rows: int, text: str, placeholders: int) -> None:
        """Remember the checked ``text`` of an allowed statement of ``shape``.

        Not learnt (the shape stays checked afresh) unless every place the checked text
        shows one of the shape's names is a bare identifier of exactly that name.
        """
        tokens = _tokens(text, self.dialect)
        if tokens is None:
            return
        index = {name: i for i, name in enumerate(shape.names)}
        parts: list[str | int] = []
        at = 0
        for token in tokens:
            if token.token_type is TokenType.VAR and token.text in index:
                parts += [text[at : token.start], index[token.text]]
                at = token.end + 1
            elif any(name in token.text for name in index):
                return  # quoted, in a string, part of a longer word: not a plain rename
        parts.append(text[at:])
        template = _Template(tuple(parts), placeholders)
        if template.fill(shape.names) != text:
            return  # the cut does not give the text back: never use it
        self._templates.put((shape.tokens, max_rows), template)

    def checked_text(self, shape: Shape, max_rows: int) -> tuple[str, int] | None:
        """(checked text, placeholders) for a statement of a learnt ``shape``, or None."""
        template = self._templates.get((shape.tokens, max_rows))
        if template is None:
            return None
        return template.fill(shape.names), template.placeholders
