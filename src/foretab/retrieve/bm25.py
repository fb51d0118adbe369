"""BM25 over table captions: the retriever's fallback when a caption has no exact match."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rank_bm25 import BM25Okapi

from foretab.store.catalog import CatalogEntry

_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    """Lower-case word tokens; apostrophes are dropped so "Bao'an" matches "Baoan"."""
    return _TOKEN.findall(text.lower().replace("'", "").replace("\u2019", ""))


class CaptionIndex:
    """Ranks catalog captions against a free-text caption."""

    def __init__(self, catalog: Sequence[CatalogEntry]) -> None:
        self.entries = list(catalog)
        self._bm25 = (
            BM25Okapi([tokenize(e.caption) for e in self.entries]) if self.entries else None
        )

    def search(self, text: str, k: int = 3) -> list[tuple[CatalogEntry, float]]:
        """The ``k`` best entries with their scores, best first."""
        if self._bm25 is None:
            return []
        scores = self._bm25.get_scores(tokenize(text))
        order = sorted(range(len(scores)), key=lambda i: -scores[i])[:k]
        return [(self.entries[i], float(scores[i])) for i in order]
