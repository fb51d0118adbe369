"""Table names and captions of the history and future stores (docs/design.md §1)."""

from __future__ import annotations

import re

from foretab.corpus.schema import RESERVED_PREFIXES, default_schema, snake

__all__ = ["is_table_name", "snake", "table_name"]

CATALOG_TABLE = "foretab_catalog"
PROJECTS_TABLE = "foretab_projects"
META_TABLE = "foretab_meta"
ARTIFACTS_TABLE = "foretab_artifacts"
# foretab_meta key saying which side of a store a database holds: "history" or "future".
SIDE_KEY = "side"
# foretab_meta key shared by the two sides of one ingest.
GENERATION_KEY = "generation"
# foretab_meta key holding the corpus schema (JSON); absent in stores of foretab ≤ 0.x: the
# real-estate default.
SCHEMA_KEY = "schema"


def table_name(district: str, city: str, year: int) -> str:
    """A table of the default (real-estate) schema, e.g. for examples and the demo."""
    return default_schema().table_name({"city": city, "district": district}, year)


# ``<letters, digits, underscores>_<year>`` and nothing foretab or a database keeps for
# itself: the shape every corpus schema's table template produces.
_TABLE_NAME = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*_\d{4}")


def is_table_name(name: object) -> bool:
    """Whether ``name`` is a data-table name foretab's ingest could have written.

    A store from elsewhere is untrusted: a catalog row naming ``foretab_meta``,
    ``pg_settings`` or SQL text must never become a table the guard allows or foretab reads.
    """
    return (
        isinstance(name, str)
        and _TABLE_NAME.fullmatch(name) is not None
        and not name.startswith(RESERVED_PREFIXES)
    )
