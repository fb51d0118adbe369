"""The optional extras: a command that needs one names it instead of an ImportError."""

from __future__ import annotations

import importlib.util

from foretab.errors import ForetabError

#: extra → what it is for (pyproject.toml's ``[project.optional-dependencies]``)
EXTRAS = {
    "serve": "foretab serve and its web page",
    "chat": "foretab chat's line editing and history",
    "llm": "the LLM engines and table QA",
    "bench": "the benchmarks' charts, the HTTP load test and fitting probability calibrations",
    "neural": "the torch-based forecasting models",
}


class MissingExtraError(ForetabError):
    """A package of an optional extra is not installed."""


def require(module: str, extra: str) -> None:
    """Raise ``MissingExtraError`` naming ``extra`` unless ``module`` can be imported."""
    if importlib.util.find_spec(module) is None:
        raise MissingExtraError(
            f"{module} is not installed: it comes with the [{extra}] extra, for "
            f"{EXTRAS.get(extra, extra)}; pip install 'foretab[{extra}]'"
        )
