"""``RulePlanner``: the default plan stage (no LLM) over one store's entity index."""

from __future__ import annotations

from foretab.core.months import Month
from foretab.core.plan import Plan
from foretab.parse.entities import EntityIndex
from foretab.parse.lexicon import Lexicon
from foretab.parse.parser import parse_question


class RulePlanner:
    """The rule-based planner (no LLM): entity linking, time expressions, family cues."""

    name = "rules"

    def __init__(
        self, index: EntityIndex, reference: Month, lexicon: Lexicon | None = None
    ) -> None:
        self.index = index
        self.reference = reference
        self.lexicon = lexicon

    def plan(self, question: str) -> Plan:
        return parse_question(question, self.index, self.reference, self.lexicon)
