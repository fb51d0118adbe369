"""foretab: answer natural-language questions, including about the future, over time-indexed tables."""

from foretab.errors import ForetabError
from foretab.months import Month

__all__ = ["ForetabError", "Month"]
__version__ = "0.1.0"
