"""Trusted, read-only connections for foretab's own code (catalog, panels, training).

Untrusted SQL (users, generated queries) never comes here: it goes through
``foretab.sql.guard``. These connections are still read-only, so a bug in foretab itself
cannot change a store. Both are opened by the store's ``foretab.backend`` backend.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from foretab.backend import ReadConnection, get_backend
from foretab.errors import StoreError
from foretab.store.location import StoreLocation

Side = Literal["history", "future"]


def open_side(location: StoreLocation, side: Side, generation: str | None = None) -> ReadConnection:
    """A trusted read-only connection to one side of a store.

    ``generation``: PostgreSQL reads that generation's schema (default: the current one).
    """
    target = location.history if side == "history" else location.future
    if location.backend == "duckdb" and not Path(target).exists():
        raise StoreError(missing_message(location, side))
    try:
        return get_backend(location.backend).connect(
            target, purpose="trusted", timeout_s=None, generation=generation
        )
    except StoreError as error:
        if location.backend == "duckdb":
            raise
        raise StoreError(f"{error.message}\n{missing_message(location, side)}") from None


def missing_message(location: StoreLocation, side: Side) -> str:
    """How to create the missing side of a store."""
    if side == "future":
        return (
            f"No future store at {location.describe('future')}: it exists only when the "
            "corpus was ingested with --reference-month before its last month. Re-run "
            "`foretab ingest PATH --db DB --reference-month YYYY-MM`."
        )
    return (
        f"No foretab store at {location.describe('history')}. Create one with "
        "`foretab ingest PATH --db DB` or `foretab demo --db DB`."
    )
