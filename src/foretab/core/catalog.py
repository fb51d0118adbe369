"""Typed rows of the store's catalog: what the question engine can see."""

from __future__ import annotations

from dataclasses import dataclass

from foretab.core.months import Month


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """One price table of a store (one district, city and year)."""

    table_name: str
    caption: str
    outer: str  # the values of the schema's two outer levels ("" where it has none)
    inner: str
    year: int
    rows: int


@dataclass(frozen=True, slots=True)
class EntityEntry:
    """One project with observations in the store, for entity linking.

    ``aliases`` holds extra names from the input (e.g. ``project_zh``); ``outer_aliases``
    and ``inner_aliases`` likewise (``city_zh``, ``district_zh``).
    """

    outer: str
    inner: str
    name: str
    first_month: Month
    last_month: Month
    n_months: int
    aliases: tuple[str, ...] = ()
    outer_aliases: tuple[str, ...] = ()
    inner_aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CaptionMatch:
    """How one requested caption was resolved: ``exact``, ``bm25``, ``given`` or ``missing``."""

    caption: str
    method: str
    table: CatalogEntry | None


@dataclass(frozen=True, slots=True)
class Retrieval:
    """The tables a question reads, and how each was found."""

    matches: tuple[CaptionMatch, ...]

    @property
    def tables(self) -> tuple[CatalogEntry, ...]:
        return tuple(m.table for m in self.matches if m.table is not None)
