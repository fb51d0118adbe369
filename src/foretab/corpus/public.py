"""The published JSON's names for the engine's generic entity slots.

``foretab ask --json`` and ``POST /api/ask`` publish one JSON schema
(``AnswerDoc.model_json_schema()``) whatever the store's corpus, so its keys cannot follow
each store's level names. They keep the names of the first (real-estate) release; this
module is the one place that spells them, and ``foretab.core.schema`` reads them from here.
The SQL the engine runs, and the answers' words, come from the store's ``CorpusSchema``.
"""

from __future__ import annotations

from types import MappingProxyType

#: EntityRef / ScopeRef field → JSON key
ENTITY_KEYS = MappingProxyType({"outer": "city", "inner": "district", "name": "project"})
#: Plan.entities → JSON key
ENTITIES_KEY = "projects"
