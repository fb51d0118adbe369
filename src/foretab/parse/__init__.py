"""Parse a question into a ``Plan``: entities, time window, aggregate, comparison."""

from foretab.parse.entities import EntityIndex, Linked
from foretab.parse.parser import parse_question
from foretab.parse.planner import RulePlanner
from foretab.parse.timexpr import catalog, find_time_expression

__all__ = [
    "EntityIndex",
    "Linked",
    "RulePlanner",
    "catalog",
    "find_time_expression",
    "parse_question",
]
