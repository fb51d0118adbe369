"""forecast() follows the corpus schema: on the stocks corpus its entity column is ``symbol``."""

from __future__ import annotations

from pathlib import Path

from vega_datasets import local_data

from foretab.core.months import Month
from foretab.corpus.schema import load_schema
from foretab.engine import Engine
from foretab.store.ingest import ingest_path

STOCKS = Path(local_data.stocks.filepath)
R = Month(2009, 3)


def test_forecast_relation_on_a_one_level_schema(tmp_path: Path) -> None:
    from foretab.forecast.store import train_store_model

    db = str(tmp_path / "stocks.duckdb")
    ingest_path(STOCKS, db, R, schema=load_schema("stocks"))
    train_store_model(db)
    with Engine.open(db) as engine:
        result = engine.sql(
            "SELECT * FROM forecast('stock_price_table_2009', horizon => 2) ORDER BY 1, 2"
        )
        assert result.columns == ("symbol", "month", "value", "lo", "hi")
        assert {row[0] for row in result.rows} == {"AAPL", "AMZN", "GOOG", "IBM", "MSFT"}
        aapl_may = next(r for r in result.rows if r[0] == "AAPL" and r[1].month == 5)
        answer = engine.ask("What will the price of AAPL be in May 2009?")
    assert answer.answer == [[round(aapl_may[2], 2)]]
    (interval,) = answer.intervals
    assert (interval.lo, interval.hi) == (aapl_may[3], aapl_may[4])
