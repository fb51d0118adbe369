"""foretab: answer natural-language questions, including about the future, over time-indexed tables."""

from foretab.core.months import Month
from foretab.errors import ForetabError

__all__ = ["Engine", "ForetabError", "Month"]


def __getattr__(name: str) -> object:
    # Lazy: ``import foretab`` stays cheap for commands that never build an engine.
    if name == "Engine":
        from foretab.engine import Engine

        return Engine
    raise AttributeError(name)


__version__ = "0.1.0"
