"""``foretab serve``: the JSON HTTP API and the web page (docs/design.md §9).

``create_app(EnginePool(...))`` is the ASGI app; ``foretab.cli.serve`` runs it with uvicorn.
"""

from foretab.web.app import AppSettings, create_app
from foretab.web.pool import EnginePool, engine_factory

__all__ = ["AppSettings", "EnginePool", "create_app", "engine_factory"]
