"""One question, tokenised once: the input of every planner pass.

English questions are read as normalised word tokens (``parse.text``); Chinese ones are
also segmented by jieba, with the corpus's names and the vocabulary's Chinese words added
as user words, so entity and cue matching run over words rather than raw characters.
"""

from __future__ import annotations

import logging
import re
import threading
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from foretab.parse.text import CJK, Token, tokenize

if TYPE_CHECKING:  # jieba is imported on the first Chinese question only (~0.5 s to load)
    import jieba

_CJK = re.compile(f"[{CJK}]")
# What jieba keeps inside one block (its default "han" pattern); anything else splits.
_NOT_WORD = re.compile(r"[^\u4E00-\u9FD5a-zA-Z0-9+#&._%\-]+")


@dataclass(frozen=True, slots=True)
class Segment:
    """One word of the question and its character span."""

    text: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Question:
    """The question's text, language, word tokens and (Chinese) segments."""

    text: str
    zh: bool
    tokens: tuple[Token, ...]
    segments: tuple[Segment, ...]


def is_chinese(question: str) -> bool:
    """A question written mostly in Chinese (a Chinese name in an English one is not)."""
    cjk = len(_CJK.findall(question))
    latin_words = len(re.findall(r"[A-Za-z]{2,}", question))
    return cjk >= 2 and cjk >= 2 * latin_words


_BASE: tuple[dict[str, int], int] | None = None
_BASE_LOCK = threading.Lock()


def _base_dictionary() -> tuple[dict[str, int], int]:
    """A copy of jieba's own dictionary (word frequencies and their total) for one tokenizer.

    It is loaded once per process (~0.8 s, 500,000 words) and copied for each segmenter
    (~0.04 s): each one adds its store's names to its copy. A server with several stores, or
    an engine opened again after an ingest, no longer loads it again.
    """
    global _BASE
    with _BASE_LOCK:
        if _BASE is None:
            with warnings.catch_warnings():
                # jieba 0.42 imports pkg_resources, which warns on recent setuptools.
                warnings.simplefilter("ignore")
                import jieba

            jieba.setLogLevel(logging.WARNING)
            loaded = jieba.Tokenizer()
            loaded.initialize()
            _BASE = (loaded.FREQ, loaded.total)
        freq, total = _BASE
    return dict(freq), total


class Segmenter:
    """jieba with the given user words (names, cue words), built on first use."""

    def __init__(self, words: Iterable[str] | Callable[[], Iterable[str]]) -> None:
        # ``words`` may be a function, called on first use: at 100x the corpus the names
        # are 500,000 words, and an English question never needs them.
        self._given = words
        self._tokenizer: jieba.Tokenizer | None = None
        self._lock = threading.Lock()  # `foretab serve` asks from several threads

    def _ready(self) -> jieba.Tokenizer:
        if self._tokenizer is not None:
            return self._tokenizer
        with self._lock:
            if self._tokenizer is not None:
                return self._tokenizer
            with warnings.catch_warnings():
                # jieba 0.42 imports pkg_resources, which warns on recent setuptools.
                warnings.simplefilter("ignore")
                import jieba

            tokenizer = jieba.Tokenizer()
            tokenizer.FREQ, tokenizer.total = _base_dictionary()
            tokenizer.initialized = True
            given = self._given() if callable(self._given) else self._given
            # jieba cuts text at punctuation before it looks words up, so a name written
            # with some ("芯城汇二期—芯汇都市景苑") is given as its pieces too.
            pieces = {p for w in given for p in _NOT_WORD.split(w)}
            for word in sorted({w for w in pieces if len(w) >= 2 and _CJK.search(w)}):
                # A high frequency keeps a name or cue word whole ("绿地理想城", "均价").
                tokenizer.add_word(word, freq=10**6)
            self._tokenizer = tokenizer
        return self._tokenizer

    def cut(self, text: str) -> tuple[Segment, ...]:
        """Jieba's words of ``text`` with their spans (no HMM guessing of new words)."""
        return tuple(
            Segment(word, start, end)
            for word, start, end in self._ready().tokenize(text, HMM=False)
            if word.strip()
        )


def read_question(text: str, segmenter: Segmenter) -> Question:
    """Tokenise ``text`` once; Chinese questions are also segmented."""
    zh = is_chinese(text)
    tokens = tokenize(text)
    words = tuple(Segment(t.text, t.start, t.end) for t in tokens)
    segments = segmenter.cut(text) if zh else words
    return Question(text, zh, tokens, segments)
