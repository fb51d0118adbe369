"""What a guarded query returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Truncation = Literal["", "rows", "bytes"]


@dataclass(frozen=True, slots=True)
class QueryResult:
    """Rows of one guarded query; ``truncated`` says more rows existed than were returned.

    ``truncated_by`` says which cap cut it: ``rows`` (``max_rows``) or ``bytes``
    (``max_result_bytes``).
    """

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    truncated: bool
    elapsed_s: float
    sql: str = ""
    truncated_by: Truncation = ""
