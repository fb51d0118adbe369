"""Query results as JSON-friendly values (``foretab sql --json``)."""

from __future__ import annotations

import datetime as dt
import math
import uuid
from decimal import Decimal
from typing import Any

from foretab.sql.guard import QueryResult


def json_value(value: Any) -> Any:
    """A database value as JSON: dates as ISO strings, decimals as numbers, NaN as null."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Decimal):
        number = float(value)
        return number if math.isfinite(number) else None
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [json_value(v) for v in value]
    return str(value)


def result_json(result: QueryResult) -> dict[str, object]:
    """``{"columns": [...], "rows": [[...]], "truncated": bool}``."""
    return {
        "columns": list(result.columns),
        "rows": [[json_value(v) for v in row] for row in result.rows],
        "truncated": result.truncated,
    }
