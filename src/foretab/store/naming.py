"""Table names and captions of the history and future stores (DESIGN §1)."""

from __future__ import annotations

import re
import unicodedata

TABLE_PREFIX = "project_price_table_"
CATALOG_TABLE = "foretab_catalog"
PROJECTS_TABLE = "foretab_projects"
META_TABLE = "foretab_meta"
ARTIFACTS_TABLE = "foretab_artifacts"
# foretab_meta key saying which side of a store a database holds: "history" or "future".
SIDE_KEY = "side"
# foretab_meta key shared by the two sides of one ingest.
GENERATION_KEY = "generation"


def snake(text: str) -> str:
    """``"Bao'an District"`` -> ``"baoan_district"``: ASCII, lower case, underscores."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    ascii_text = ascii_text.replace("'", "").replace("\u2019", "")
    return re.sub(r"[^a-z0-9]+", "_", ascii_text.lower()).strip("_")


def table_name(district: str, city: str, year: int) -> str:
    """``project_price_table_jiangning_district_nanjing_2021``."""
    return f"{TABLE_PREFIX}{snake(district)}_{snake(city)}_{year}"


def caption(district: str, city: str, year: int) -> str:
    """``Project Price Table for Jiangning District, Nanjing, 2021``."""
    return f"Project Price Table for {district}, {city}, {year}"


_TABLE_NAME = re.compile(rf"{TABLE_PREFIX}[a-z0-9]+(?:_[a-z0-9]+)*")


def is_table_name(name: object) -> bool:
    """Whether ``name`` is a price-table name foretab's ingest could have written.

    A store from elsewhere is untrusted: a catalog row naming ``foretab_meta``,
    ``pg_settings`` or SQL text must never become a table the guard allows or foretab reads.
    """
    return isinstance(name, str) and _TABLE_NAME.fullmatch(name) is not None
