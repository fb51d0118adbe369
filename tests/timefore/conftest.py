"""The mini store (DuckDB) for the LLM-engine tests; the fake server comes from tests/conftest."""

from __future__ import annotations

from tests.golden.conftest import mini_duckdb  # noqa: F401
