"""The planner's words per language: ``en`` and ``zh`` offer the same functions and tables."""
