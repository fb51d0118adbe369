"""Analyzer: a Plan plus history and future prices → the answer (docs/design.md §4)."""

from foretab.analyze.answer import Analysis, RuleAnalyzer, analyze, current_value

__all__ = ["Analysis", "RuleAnalyzer", "analyze", "current_value"]
