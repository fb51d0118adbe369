"""The table-QA benchmark: DataBench with its official scorer's rules."""
