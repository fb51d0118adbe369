"""Text from stores and questions, made safe to print.

Names in a store are data from someone else: ``Tower [/bold] X`` must not be read as rich
markup (a MarkupError crashes the command) and ESC/OSC sequences must never reach the
terminal raw (they can retitle it, hide text or forge links).
"""

from __future__ import annotations

import re

from rich.markup import escape
from rich.text import Text

# C0 controls except tab and newline, DEL, C1 controls (8-bit CSI/OSC), and the Unicode
# bidirectional overrides and isolates that reorder what the terminal shows.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean(value: object) -> str:
    """``value`` as text without control characters."""
    return _CONTROL.sub("", str(value))


def cell(value: object, style: str = "") -> Text:
    """``value`` as a rich ``Text`` (never parsed as markup), control characters removed."""
    return Text(clean(value), style=style)


def markup(value: object) -> str:
    """``value`` cleaned and escaped for use inside a rich markup string."""
    return escape(clean(value))
