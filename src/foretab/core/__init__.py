"""Core types every stage shares: months, plans, series, answers, traces, the stage interfaces."""
