"""Typed catalog rows (defined in ``foretab.core.catalog``, where every stage finds them)."""

from foretab.core.catalog import CatalogEntry, ProjectEntry

__all__ = ["CatalogEntry", "ProjectEntry"]
