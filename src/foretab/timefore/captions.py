"""Table retrieval of the paper: LLM caption summary → exact match → BM25.

The LLM turns the question into table captions (few-shot, five examples). Each caption is
looked up exactly in the catalog; one that is not found goes to BM25 over all captions,
and the best hit is kept only if its score reaches a threshold *relative to that hit's
own caption* (scores of raw BM25 grow with the corpus; the ratio does not) and it is for
the same year: a caption for a year the history store does not hold (the future) must
stay missing rather than read another year's table.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from foretab.core.catalog import CaptionMatch, CatalogEntry, Retrieval
from foretab.core.plan import Plan
from foretab.llm import ChatMessage
from foretab.retrieve.bm25 import CaptionIndex, tokenize
from foretab.timefore.examples import Example, pick
from foretab.timefore.extract import extract_captions
from foretab.timefore.prompts import render, summary_examples
from foretab.timefore.session import AgentSession, Conversation, ask_until

DEFAULT_BM25_THRESHOLD = 0.6
_GENERIC = frozenset({"district", "county", "new", "area", "zone", "city"})
_YEAR = re.compile(r"\b(19|20)\d{2}\b")


class CaptionSearch:
    """Exact caption lookup with a thresholded BM25 fallback (``retrieve.bm25``)."""

    def __init__(
        self, catalog: Sequence[CatalogEntry], threshold: float = DEFAULT_BM25_THRESHOLD
    ) -> None:
        self.entries = list(catalog)
        self.threshold = threshold
        self._exact = {_norm(e.caption): e for e in self.entries}
        self._index = CaptionIndex(self.entries)
        self._self_score: dict[int, float] = {}

    def search(self, text: str, k: int = 3) -> list[tuple[CatalogEntry, float]]:
        """The ``k`` best entries with their relative scores (1.0 = the caption itself)."""
        scores = self._index.scores(tokenize(text))
        order = sorted(range(len(scores)), key=lambda i: -scores[i])[:k]
        out = []
        for i in order:
            if scores[i] <= 0:
                continue
            if i not in self._self_score:
                own = self._index.scores(self._index.tokens[i])[i]
                self._self_score[i] = max(float(own), 1e-9)
            out.append((self.entries[i], float(scores[i]) / self._self_score[i]))
        return out

    def match(self, text: str) -> CaptionMatch:
        exact = self._exact.get(_norm(text))
        if exact is not None:
            return CaptionMatch(text, "exact", exact)
        years = {m.group(0) for m in _YEAR.finditer(text)}
        words = set(tokenize(text))
        for entry, score in self.search(text):
            if score < self.threshold:
                break
            if years and str(entry.year) not in years:
                continue
            # Same city and year but another district scores high on the shared words;
            # the district's own name must be in the caption.
            if not (set(tokenize(entry.inner)) - _GENERIC) <= words:
                continue
            return CaptionMatch(text, "bm25", entry)
        return CaptionMatch(text, "missing", None)


def _norm(text: str) -> str:
    return " ".join(text.lower().replace("\u2019", "'").split()).strip(" .'\"")


class CaptionAgent:
    """The Retriever's first half: summarise the question into captions, then match them."""

    name = "timefore.captions"

    def __init__(
        self,
        session: AgentSession,
        catalog: Sequence[CatalogEntry],
        examples: Sequence[Example],
        *,
        threshold: float = DEFAULT_BM25_THRESHOLD,
        retries: int = 2,
    ) -> None:
        self.session = session
        self.search = CaptionSearch(catalog, threshold)
        self.examples = pick(examples)
        self.retries = retries

    def take_steps(self) -> tuple:
        return self.session.take_steps()

    def retrieve(self, plan: Plan) -> Retrieval:
        prompt = render(
            "summary",
            plan.reference_month,
            examples=summary_examples(self.examples),
            query=plan.question,
        )
        captions, _ = ask_until(
            self.session,
            self.name,
            Conversation([ChatMessage.user(prompt)]),
            purpose="caption summary",
            parse=extract_captions,
            reminder="Answer with only a Python list of table captions, e.g. "
            "['Project Price Table for Jiangning District, Nanjing, 2021'].",
            retries=self.retries,
        )
        assert isinstance(captions, list)
        matches = tuple(self.search.match(c) for c in dict.fromkeys(captions))
        return Retrieval(matches)
