"""One error root for foretab: every message says what was wrong and how to fix it."""

from __future__ import annotations

from typing import Any


class ForetabError(Exception):
    """Root of every error foretab raises on purpose.

    ``suggestions`` carries close matches or fixes ("did you mean ...") so the CLI can
    print them and ``--json`` can return them as a list.
    """

    kind = "error"

    def __init__(self, message: str, *, suggestions: tuple[str, ...] | list[str] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.suggestions = tuple(suggestions)

    def to_dict(self) -> dict[str, object]:
        """The ``{"type", "message", "suggestions"}`` object printed by ``--json``."""
        return {
            "type": type(self).__name__,
            "message": self.message,
            "suggestions": list(self.suggestions),
        }


class IngestError(ForetabError):
    """Bad input to ``foretab ingest``: names the file, row and column."""


class StoreError(ForetabError):
    """A store cannot be opened or is not a foretab store."""


class GuardError(ForetabError):
    """A statement was refused by the SQL guard; ``rule`` names the rule it broke."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"refused ({rule}): {message}")
        self.rule = rule

    def to_dict(self) -> dict[str, object]:
        data = super().to_dict()
        data["rule"] = self.rule
        return data


class QueryError(ForetabError):
    """A statement passed the guard but failed or timed out while running."""


class QueryTimeoutError(QueryError):
    """A statement was stopped at its time limit."""


class QuestionError(ForetabError):
    """A question could not be understood (no entity, no time expression, ...)."""


class UnknownEntityError(QuestionError):
    """A city, district or project in the question matches nothing in the catalog."""


class AmbiguousEntityError(QuestionError):
    """A name in the question matches several catalog entries equally well.

    Where the name is one exact catalog name of several entities, ``mention`` is it,
    ``start``/``end`` its characters in the text linked and ``candidates`` the entities
    (``EntityRef``), for a clarifying choice (docs/design.md §4.3); else they are empty.
    """

    def __init__(
        self,
        message: str,
        *,
        suggestions: tuple[str, ...] | list[str] = (),
        mention: str = "",
        start: int = 0,
        end: int = 0,
        candidates: tuple[Any, ...] | list[Any] = (),
    ) -> None:
        super().__init__(message, suggestions=suggestions)
        self.mention = mention
        self.start = start
        self.end = end
        self.candidates = tuple(candidates)


class ForecastError(ForetabError):
    """A forecaster is missing, untrained, or cannot forecast the requested months."""
