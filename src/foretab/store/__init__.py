"""Corpus stores: history (what the engine sees) and future (evaluation only)."""

from foretab.store.catalog import CatalogEntry, EntityEntry
from foretab.store.location import StoreLocation
from foretab.store.stores import FutureStore, HistoryStore, open_future, open_history

__all__ = [
    "CatalogEntry",
    "EntityEntry",
    "FutureStore",
    "HistoryStore",
    "StoreLocation",
    "open_future",
    "open_history",
]
