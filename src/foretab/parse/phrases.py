"""The question language's real-estate words: the default corpus schema's ``[phrasing]``.

The cue patterns of ``parse.families``, ``parse.parser``, ``parse.timexpr`` and the word
lists of ``parse.vocabulary`` splice these in, compiled once at import. They are read
from the default (real-estate) schema, so a store with another schema parses with the
same cue patterns; its own level and measure words come through ``parse.lexicon``.
"""

from __future__ import annotations

from foretab.corpus.schema import Phrasing, default_schema

PHRASES: Phrasing = default_schema().phrasing
