"""The paper's two-stage table retrieval: canonical captions → exact match, BM25 fallback.

The plan already names resolved districts, so the canonical captions are exact in the
common case; BM25 covers captions that differ in spelling (punctuation, case) from the
catalog. A BM25 hit is accepted only when it is for the same district, city and year:
otherwise the table does not exist (e.g. no sales in that district that year) and the
trace says so rather than silently reading another district's table.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

from foretab.core.catalog import CaptionMatch, CatalogEntry, Retrieval
from foretab.core.months import Month
from foretab.core.plan import Plan, Task
from foretab.corpus.schema import CorpusSchema, default_schema, snake
from foretab.retrieve.bm25 import CaptionIndex

# Months of history the forecaster reads before the reference month (the paper uses 24).
LOOKBACK_MONTHS = 24


def history_span(plan: Plan) -> tuple[Month, Month]:
    """The months of history a plan needs: its window, or the forecaster's lookback."""
    reference = plan.reference_month
    if plan.task is Task.HISTORY:
        return plan.window.first, min(plan.window.last, reference)
    return reference - (LOOKBACK_MONTHS - 1), reference


def required_captions(plan: Plan, schema: CorpusSchema | None = None) -> list[str]:
    """Canonical captions of every table (group of entities and year) the plan needs."""
    schema = schema or default_schema()
    first, last = history_span(plan)
    captions: list[str] = []
    for ref in plan.entities:
        groups = {name: getattr(ref, slot) for slot, name in schema.group_slots}
        for year in range(first.year, last.year + 1):
            text = schema.caption(groups, year)
            if text not in captions:
                captions.append(text)
    return captions


class Retriever:
    """Finds the history tables a plan reads."""

    name = "captions"

    def __init__(self, catalog: Sequence[CatalogEntry], schema: CorpusSchema | None = None) -> None:
        self._by_caption = {e.caption: e for e in catalog}
        self._catalog = catalog
        self._schema = schema or default_schema()

    @cached_property
    def _index(self) -> CaptionIndex:
        # Built on the first caption that is not in the catalog as written: most questions
        # never need it, and at 100x the corpus it tokenises 30,000 captions.
        return CaptionIndex(self._catalog)

    def retrieve(self, plan: Plan) -> Retrieval:
        captions = required_captions(plan, self._schema)
        return Retrieval(tuple(self.match(text) for text in captions))

    def match(self, text: str) -> CaptionMatch:
        """Resolve one caption: exact match first, then the best same-table BM25 hit."""
        exact = self._by_caption.get(text)
        if exact is not None:
            return CaptionMatch(text, "exact", exact)
        wanted = snake(text)
        for entry, _score in self._index.search(text, k=3):
            if snake(entry.caption) == wanted:
                return CaptionMatch(text, "bm25", entry)
        return CaptionMatch(text, "missing", None)

    def by_names(self, names: Sequence[str]) -> Retrieval:
        """Tables given by name (the golden-captions ablation), checked against the catalog."""
        by_name = {e.table_name: e for e in self._by_caption.values()}
        return Retrieval(
            tuple(
                CaptionMatch(by_name[n].caption if n in by_name else n, "given", by_name.get(n))
                for n in names
            )
        )
