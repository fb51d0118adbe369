"""Text from stores and questions, made safe to print.

Names in a store are data from someone else: ``Tower [/bold] X`` must not be read as rich
markup (a MarkupError crashes the command) and ESC/OSC sequences must never reach the
terminal raw (they can retitle it, hide text or forge links).
"""

from __future__ import annotations

import re

from rich.markup import escape
from rich.text import Text

# C0 controls except tab and newline, DEL, C1 controls (8-bit CSI/OSC), the Unicode
# bidirectional marks, overrides and isolates that reorder what the terminal shows, the
# line/paragraph separators and lone surrogates (undecodable argv bytes: printing them
# raises). ``foretab.core.schema.terminal_safe`` escapes the same set inside JSON.
_CONTROL = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
    r"\ud800-\udfff]"
)


def clean(value: object) -> str:
    """``value`` as text without control characters."""
    return _CONTROL.sub("", str(value))


def cell(value: object, style: str = "") -> Text:
    """``value`` as a rich ``Text`` (never parsed as markup), control characters removed."""
    return Text(clean(value), style=style)


def markup(value: object) -> str:
    """``value`` cleaned and escaped for use inside a rich markup string."""
    return escape(clean(value))
