"""The question engine: one ``StoreContext`` per store, stages composed, then ``ask``.

    from foretab.engine import Engine, build_engine

    with Engine.open("corpus.duckdb") as engine:           # the rules engine
        print(engine.ask("Which project in Pudong was cheapest in March 2021?").text)

``context.py`` (what engines share), ``core.py`` (``Engine.ask`` over ``Stages``),
``rules.py`` / ``agents.py`` (the stage sets), ``build.py`` (``build_engine`` for every
kind), ``llm.py`` and ``hybrid.py`` (the LLM engines' wrappers), ``choice.py`` (the
engine and LLM flags as one value).

The names below load on first use: ``foretab --help`` and the CLI's option group import
``foretab.engine.choice`` without the parser, the guard or the store.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what the names are, for type checkers (the runtime loads them lazily)
    from foretab.engine.build import (  # noqa: F401
        ENGINES,
        LLM_ENGINES,
        build_engine,
        check_engine,
        no_llm_error,
        provider_for,
    )
    from foretab.engine.choice import EngineChoice  # noqa: F401
    from foretab.engine.context import StaleContextError, StoreContext, StoreSession  # noqa: F401
    from foretab.engine.core import Engine, Stages  # noqa: F401
    from foretab.engine.hybrid import HybridEngine  # noqa: F401
    from foretab.engine.llm import LLMEngine, last_usage  # noqa: F401

_WHERE = {
    "ENGINES": "build",
    "LLM_ENGINES": "build",
    "build_engine": "build",
    "check_engine": "build",
    "no_llm_error": "build",
    "provider_for": "build",
    "EngineChoice": "choice",
    "StaleContextError": "context",
    "StoreContext": "context",
    "StoreSession": "context",
    "Engine": "core",
    "Stages": "core",
    "HybridEngine": "hybrid",
    "LLMEngine": "llm",
    "last_usage": "llm",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> object:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'foretab.engine' has no attribute {name!r}")
    return getattr(importlib.import_module(f"foretab.engine.{module}"), name)
