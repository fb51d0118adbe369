"""Retrieve: which history tables a question reads (canonical captions, BM25 fallback)."""

from foretab.retrieve.retriever import (
    LOOKBACK_MONTHS,
    CaptionMatch,
    Retrieval,
    Retriever,
    history_span,
    required_captions,
)

__all__ = [
    "LOOKBACK_MONTHS",
    "CaptionMatch",
    "Retrieval",
    "Retriever",
    "history_span",
    "required_captions",
]
