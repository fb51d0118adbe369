"""The paper's ablations as stage implementations (§5.3): golden captions, golden history.

The benchmark builds an ``Engine`` with these in place of the default retriever / reader;
the golden future and persistence are the ``oracle`` and ``none`` future sources. Each
looks the question's gold data up by its text, so it answers only questions of the
dataset it was built from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from foretab.core.catalog import Retrieval
from foretab.core.plan import Plan
from foretab.corpus.schema import TableColumns
from foretab.dataset.items import QAItem
from foretab.errors import ForetabError
from foretab.read import GivenSQLReader
from foretab.retrieve import Retriever
from foretab.sql.guard import GuardedExecutor


class GoldError(ForetabError):
    """A golden stage was asked about a question its dataset does not hold."""


def _gold(table: Mapping[str, object], plan: Plan, what: str) -> object:
    try:
        return table[plan.question]
    except KeyError:
        raise GoldError(
            f"no golden {what} for the question {plan.question!r}: golden stages answer only "
            "the questions of the dataset they were built from"
        ) from None


class GoldenCaptions:
    """GTC: the dataset's golden tables instead of caption retrieval."""

    name = "golden-captions"

    def __init__(self, retriever: Retriever, items: Sequence[QAItem]) -> None:
        self.retriever = retriever
        self.tables = {item.question: tuple(item.tables) for item in items}

    def retrieve(self, plan: Plan) -> Retrieval:
        return self.retriever.by_names(_gold(self.tables, plan, "tables"))  # type: ignore[arg-type]


def golden_history(
    guard: GuardedExecutor, items: Sequence[QAItem], cols: TableColumns | None = None
) -> GivenSQLReader:
    """GH: the dataset's golden history SQL, run through the guard like any other SQL.

    ``cols``: the store's table columns (its corpus schema), which the SQL returns.
    """
    sql = {item.question: item.history_sql for item in items}
    return GivenSQLReader(
        guard, lambda plan: str(_gold(sql, plan, "history SQL")), "golden-history", cols
    )
