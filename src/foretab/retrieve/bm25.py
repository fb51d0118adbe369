"""BM25 over table captions (``bm25s``): the retrievers' fallback when a caption has no exact match.

One index serves the rules retriever and the TimeFore caption agent.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from foretab.store.catalog import CatalogEntry

if TYPE_CHECKING:
    import bm25s

_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    """Lower-case word tokens; apostrophes are dropped so "Bao'an" matches "Baoan"."""
    return _TOKEN.findall(text.lower().replace("'", "").replace("\u2019", ""))


class CaptionIndex:
    """Ranks catalog captions against a free-text caption."""

    def __init__(self, catalog: Sequence[CatalogEntry]) -> None:
        self.entries = list(catalog)
        self.tokens = [tokenize(e.caption) for e in self.entries]
        self.vocabulary = frozenset(t for tokens in self.tokens for t in tokens)
        self._bm25: bm25s.BM25 | None = None
        if self.entries:
            # Imported here, not with the module: it brings scipy.sparse (0.3 to 0.7 s of
            # a cold `foretab ask`), and most questions' captions are in the catalog as
            # written, so the index is never built.
            import bm25s

            self._bm25 = bm25s.BM25()
            self._bm25.index(self.tokens, show_progress=False)

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        """Every caption's score for ``tokens`` (words outside the captions count nothing)."""
        known = [t for t in tokens if t in self.vocabulary]
        if self._bm25 is None or not known:
            return np.zeros(len(self.entries))
        return np.asarray(self._bm25.get_scores(known), dtype=float)

    def search(self, text: str, k: int = 3) -> list[tuple[CatalogEntry, float]]:
        """The ``k`` best entries with their scores, best first (none that score 0)."""
        scores = self.scores(tokenize(text))
        order = sorted(range(len(scores)), key=lambda i: -scores[i])[:k]
        return [(self.entries[i], float(scores[i])) for i in order if scores[i] > 0]
