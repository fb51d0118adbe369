"""English follow-up words ("and next year?", "what about X?", "the lowest instead")."""

from __future__ import annotations

import re

from foretab.converse.words import FollowUpWords

_I = re.I

WORDS = FollowUpWords(
    follow_up=re.compile(
        r"^\s*(?:and\b|what\s+about\b|how\s+about\b|what\s+of\b|then\b|instead\b|in\s+units\b"
        r"|in\s+(?:percent|percentage)s?\b|as\s+a\s+percentage\b|in\s+price\b|compared?\s+(?:with|to)\b"
        r"|vs\.?\s|versus\b|same\b|now\s+for\b|also\b|(?:the\s+)?(?:lowest|highest|cheapest|most\s+expensive|minimum|maximum|max|min)\b"
        r"|both\b|(?:the\s+)?(?:first|second|third|fourth|fifth|sixth)(?:\s+one)?\s*[?.!]*\s*$"
        r"|\d\s*[?.!]*\s*$|which\s+of\s+(?:the\s+two|them|these|those|both)\b)",
        _I,
    ),
    last_year=re.compile(
        r"\b(?:compared?\s+(?:with|to)|vs\.?|versus|against|than)\s+(?:the\s+same\s+month\s+)?last\s+year\b"
        r"|\byear[\s-]+(?:over|on)[\s-]+year\b|\byoy\b",
        _I,
    ),
    add_subject=re.compile(
        r"^\s*(?:and\s+)?(?:compared?\s+(?:with|to)|vs\.?|versus|against)\b", _I
    ),
    both=re.compile(
        r"^\s*(?:and\s+)?(?:both(?:\s+of\s+them)?|all\s+of\s+them|all)\s*[?.!]*\s*$", _I
    ),
    choice=re.compile(
        r"^\s*(?:the\s+)?(?P<n>first|second|third|fourth|fifth|sixth|\d)(?:\s+one)?\s*[?.!]*\s*$",
        _I,
    ),
    the_two=re.compile(r"\b(?:the\s+two|both\s+of\s+them|these\s+two|those\s+two|them|they)\b", _I),
    lowest=re.compile(r"\b(?:lowest|cheapest|minimum|min|least\s+expensive|bottom)\b", _I),
    highest=re.compile(r"\b(?:highest|most\s+expensive|maximum|max|peak|top)\b", _I),
    percent=re.compile(r"\b(?:in\s+)?(?:percent(?:age)?s?|relative(?:\s+terms)?)\b|%", _I),
    mean=re.compile(r"\b(?:average|mean)\b", _I),
    each=re.compile(r"\b(?:each\s+month|every\s+month|month\s+by\s+month|monthly)\b", _I),
    filler=re.compile(
        r"\b(?:and|what|about|how|of|for|then|instead|the|a|an|in|at|on|one|please|is|was|"
        r"will|be|it|its|that|this|same|also|as|with|compared|to|vs|versus|again|now|question|"
        r"please|was|were|is|are|did|do|does|so|ok|okay)\b|[?.!,;:\s]+",
        _I,
    ),
    full_question=re.compile(
        r"^\s*(?:what(?!\s+about\b|\s+of\b)|which|how(?!\s+about\b)|will|would|is|are|was|were|did|"
        r"does|do|can|could|should|please|tell|show|list|give|compare|find|when|where|whose|who|"
        r"in\s+which|by\s+how\s+much|i\s+(?:want|would|need))\b",
        _I,
    ),
    pronoun=re.compile(r"\b(?:it|its|it's|that\s+one|this\s+one)\b", _I),
)
