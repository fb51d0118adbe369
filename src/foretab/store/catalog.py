"""Typed catalog rows (defined in ``foretab.core.catalog``, where every stage finds them)."""

from foretab.core.catalog import CatalogEntry, EntityEntry

__all__ = ["CatalogEntry", "EntityEntry"]
