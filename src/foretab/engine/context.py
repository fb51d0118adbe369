"""``StoreContext``: what every engine over one store generation shares, built once.

Opening a store and its indexes (the entity index ingest saved, the BM25 caption index)
takes a few hundred milliseconds; linking a question against them takes
about one. The CLI, the web pool and every engine (rules or LLM) over one generation of
a store share one context, read-only after it is built. What cannot be shared — a DuckDB
connection and the guard's worker are used by one thread at a time — each engine opens
for itself with ``connect``, as a ``StoreSession`` of the same generation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from foretab.core.catalog import CatalogEntry, EntityEntry
from foretab.core.months import Month
from foretab.core.plan import Wording
from foretab.corpus.schema import CorpusSchema
from foretab.errors import StoreError
from foretab.parse.entities import EntityIndex
from foretab.parse.entity_file import load_entity_index
from foretab.parse.lexicon import Lexicon
from foretab.retrieve import Retriever
from foretab.sql.forecast_rows import StoreForecasts
from foretab.sql.guard import GuardedExecutor
from foretab.store import HistoryStore, open_history
from foretab.store.location import StoreLocation


class StaleContextError(StoreError):
    """The store was re-ingested after the context was built: build a new context."""


@dataclass(frozen=True)
class StoreSession:
    """One engine's own connections to the context's store generation.

    ``store`` reads the catalog and the fitted model; ``guard`` runs every question's SQL.
    """

    context: StoreContext
    store: HistoryStore
    guard: GuardedExecutor
    #: ``forecast()`` in the guard's SQL: the store model's forecasts, from history only
    forecasts: StoreForecasts

    @property
    def schema(self) -> CorpusSchema:
        return self.context.schema

    def close(self) -> None:
        self.guard.close()
        self.store.close()


@dataclass(frozen=True, eq=False)
class StoreContext:
    """A store generation's schema, lexicon, catalog, entity index and reference month.

    Build with ``StoreContext.open(db)``; the caption retriever is built on first use and
    shared as well (it only reads its index).
    """

    db: str
    generation: str | None
    schema: CorpusSchema
    lexicon: Lexicon
    wording: Wording
    catalog: tuple[CatalogEntry, ...]
    entities: Sequence[EntityEntry]  # read on demand from the index's arrays
    index: EntityIndex
    reference: Month
    #: where the store is, for messages (a PostgreSQL URL with its password redacted)
    describe: str

    @classmethod
    def open(cls, db: str) -> StoreContext:
        """Open the current generation of store ``db`` and build its indexes."""
        with open_history(db) as store:
            return cls.of(db, store)

    @classmethod
    def of(cls, db: str, store: HistoryStore) -> StoreContext:
        """The context of the generation ``store`` has open.

        The entity index is the one ingest saved with this generation; a store without
        one (or with a stale or damaged one) has it built now, as older foretabs did.
        """
        schema = store.schema
        lexicon = Lexicon.of(schema)
        wording = Wording.of(schema)
        saved = load_entity_index(store)
        if saved is not None:
            index = EntityIndex.of_arrays(saved, lexicon.zh_words, wording)
        else:
            index = EntityIndex(store.entities(), lexicon.zh_words, wording)
        entities = index.entries
        reference = store.reference_month or max(p.last_month for p in entities)
        return cls(
            db=db,
            generation=store.generation,
            schema=schema,
            lexicon=lexicon,
            wording=wording,
            catalog=tuple(store.catalog()),
            entities=entities,
            index=index,
            reference=reference,
            describe=store.location.describe(),
        )

    @cached_property
    def retriever(self) -> Retriever:
        """The caption retriever (canonical captions, BM25 fallback) over this catalog."""
        return Retriever(self.catalog, self.schema)

    @classmethod
    def open_session(
        cls, db: str, *, max_rows: int = 10_000, timeout_s: float = 5.0
    ) -> StoreSession:
        """A new context of ``db``'s current generation and a first session over it.

        A DuckDB store is opened by the guard's worker only: it sends back the store's
        metadata and catalog (``StoreDescription``), then checks the store for the guard
        while this process builds the context, which opens the file itself only if
        something needs its own connection (at 100x the corpus DuckDB takes
        over a second to open a file of 30,592 tables, and most of one to close it). A
        store the worker cannot describe is opened here, as before, for its error.
        """
        described = _described_session(db, max_rows, timeout_s)
        if described is not None:
            store, guard = described
            try:
                # Built while the worker checks the store for the guard's session.
                context = cls.of(db, store)
                guard.wait_open()
                forecasts = StoreForecasts(store)
                guard.forecasts = forecasts
                return StoreSession(context, store, guard, forecasts)
            except BaseException:
                guard.close()
                store.close()
                raise
        store = open_history(db)
        try:
            return _session(cls.of(db, store), store, max_rows, timeout_s)
        except BaseException:
            store.close()
            raise

    def connect(self, *, max_rows: int = 10_000, timeout_s: float = 5.0) -> StoreSession:
        """A connection and a guard of this generation, for one engine (one thread at a time).

        Raises ``StaleContextError`` when the store has been re-ingested since: answering
        from this context's indexes over the new generation's tables would mix the two.
        """
        store = open_history(self.db)
        try:
            if store.generation != self.generation:
                raise StaleContextError(
                    f"the store {self.describe} was re-ingested while it was open; open it again"
                )
            return _session(self, store, max_rows, timeout_s)
        except BaseException:
            store.close()
            raise


def _described_session(
    db: str, max_rows: int, timeout_s: float
) -> tuple[HistoryStore, GuardedExecutor] | None:
    """A DuckDB store's guard and its store object built from what the guard's worker read.

    None (open it the old way) for PostgreSQL, a missing file, or a store the worker
    refused: the old path then reports the same errors as before.
    """
    try:
        location = StoreLocation.parse(db)
    except StoreError:
        return None
    if location.backend != "duckdb" or not Path(location.history).is_file():
        return None
    try:
        guard = GuardedExecutor(location, max_rows=max_rows, timeout_s=timeout_s, describe=True)
    except StoreError:
        return None
    try:
        assert guard.store_description is not None
        return HistoryStore(location, described=guard.store_description), guard
    except BaseException:
        guard.close()
        raise


def _session(
    context: StoreContext, store: HistoryStore, max_rows: int, timeout_s: float
) -> StoreSession:
    forecasts = StoreForecasts(store)
    # The store itself: the guard reads the generation the store opened.
    guard = GuardedExecutor(store, max_rows=max_rows, timeout_s=timeout_s, forecasts=forecasts)
    return StoreSession(context, store, guard, forecasts)
