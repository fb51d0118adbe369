"""Read history: the plan's series, through the SQL guard (``GuardedHistoryReader``)."""

from foretab.read.reader import (
    GivenSQLReader,
    GuardedHistoryReader,
    rows_to_history,
)

__all__ = ["GivenSQLReader", "GuardedHistoryReader", "rows_to_history"]
