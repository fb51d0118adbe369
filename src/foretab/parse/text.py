"""Normalised word tokens with their character spans in the original question.

Names are compared in one normal form on both sides (catalog and question): NFKC (so
full-width and Roman-numeral characters become ASCII), possessive "'s" dropped ("Wuhan's"
→ "wuhan"), apostrophes removed ("Bao'an" → "baoan"), accents and other non-ASCII letters
dropped, lower case, every other non-alphanumeric character a word break.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

#: The Chinese characters, for character classes: CJK Unified Ideographs with Extension A,
#: and the compatibility ideographs. The one statement of what counts as Chinese text.
CJK = "\u3400-\u9fff\uf900-\ufaff"
# Chinese characters are not part of a word: "AAPL下个月" is the name "AAPL" and then the
# time expression (the Chinese side is matched as substrings, not words).
_LETTERS = rf"[^\W_{CJK}]+"
_WORD = re.compile(rf"{_LETTERS}(?:['’]{_LETTERS})*", re.UNICODE)
_POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)
_CJK = re.compile(f"[{CJK}]")
# Greek capitals that stand in for Latin ones in romanised names ("MOMA" as "Μ Ο Μ A").
_LOOKALIKES = str.maketrans("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧαβεικμορτυχ", "ABEZHIKMNOPTYXabeikmoptyx")


@dataclass(frozen=True, slots=True)
class Token:
    """One normalised word and where its source word sits in the original text."""

    text: str
    start: int
    end: int
    capitalized: bool


_ASCII_SPLIT = re.compile(r"[a-z0-9]+")


def _normal_words(word: str) -> list[str]:
    if word.isascii():  # the common case, without the Unicode round trips
        word = _POSSESSIVE.sub("", word).replace("'", "")
        return _ASCII_SPLIT.findall(word.lower())
    word = unicodedata.normalize("NFKC", word).translate(_LOOKALIKES)
    word = _POSSESSIVE.sub("", word)
    word = word.replace("'", "").replace("’", "")
    ascii_word = unicodedata.normalize("NFKD", word).encode("ascii", "ignore").decode()
    return re.findall(r"[a-z0-9]+", ascii_word.lower())


@lru_cache(maxsize=256)
def tokenize(text: str) -> tuple[Token, ...]:
    """Normalised tokens of ``text`` with their original character spans."""
    tokens: list[Token] = []
    for match in _WORD.finditer(text):
        word = match.group(0)
        capitalized = word[:1].isupper() or word[:1].isdigit()
        for part in _normal_words(word):
            tokens.append(Token(part, match.start(), match.end(), capitalized))
    return tuple(tokens)


def normalize(text: str) -> str:
    """The normal form used to compare names: ``"Bao'an District"`` → ``"baoan district"``."""
    return " ".join(token.text for token in tokenize(text))


def has_cjk(text: str) -> bool:
    """True when the text holds Chinese characters (matched as substrings, not words)."""
    return bool(_CJK.search(text))


def mask(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with every character inside ``spans`` replaced by ``#`` (lengths kept)."""
    chars = list(text)
    for start, end in spans:
        for i in range(max(start, 0), min(end, len(chars))):
            chars[i] = "#"
    return "".join(chars)
