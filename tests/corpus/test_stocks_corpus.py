"""A second real corpus end to end: vega_datasets' monthly stock prices (symbol, date, price).

Ingested with the packaged ``stocks`` schema; every question family that applies to a
one-level, one-measure schema is asked through the same engine, and the expected values
are computed here from the CSV with pandas, not through foretab.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd
import pytest
from vega_datasets import local_data

from foretab.core.months import Month
from foretab.corpus.schema import load_schema
from foretab.engine import Engine
from foretab.errors import IngestError, QuestionError, StoreError
from foretab.forecast.source import ModelSource
from foretab.store import open_history
from foretab.store.ingest import ingest_frame, ingest_path
from tests.doubles import NaiveStoreModel

STOCKS = Path(local_data.stocks.filepath)
R = Month(2009, 3)


@pytest.fixture(scope="module")
def prices() -> pd.DataFrame:
    frame = pd.read_csv(STOCKS)
    frame["month"] = pd.to_datetime(frame["date"], format="%b %d %Y").dt.strftime("%Y-%m")
    return frame


@pytest.fixture(scope="module")
def stocks_db(tmp_path_factory) -> str:
    db = str(tmp_path_factory.mktemp("stocks") / "stocks.duckdb")
    ingest_path(STOCKS, db, R, schema=load_schema("stocks"))
    return db


@pytest.fixture(scope="module")
def engine(stocks_db: str):
    with Engine.open(
        stocks_db, future_source=lambda e: ModelSource.with_store_dates(NaiveStoreModel(), e.store)
    ) as engine:
        yield engine


def _price(prices: pd.DataFrame, symbol: str, month: str) -> float:
    row = prices[(prices.symbol == symbol) & (prices.month == month)]
    return round(float(row.price.iloc[0]), 2)


def test_tables_are_named_and_captioned_by_the_schema(stocks_db: str, prices) -> None:
    with open_history(stocks_db) as store:
        assert store.schema == load_schema("stocks")
        names = [e.table_name for e in store.catalog()]
        captions = [e.caption for e in store.catalog()]
        assert names == [f"stock_price_table_{y}" for y in range(2000, 2010)]
        assert captions[5] == "Stock Price Table for 2005"
        assert {(e.outer, e.inner) for e in store.catalog()} == {("", "")}
        assert {p.name for p in store.entities()} == set(prices.symbol)
    conn = duckdb.connect(stocks_db, read_only=True)
    try:
        columns = [r[0] for r in conn.execute("DESCRIBE stock_price_table_2005").fetchall()]
        rows = conn.execute("SELECT count(*) FROM stock_price_table_2009").fetchone()
    finally:
        conn.close()
    assert columns == ["symbol", "month", "price"]
    assert rows == (15,)  # 5 symbols × January..March 2009 (R = 2009-03)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # one month, past
        ("What was the price of AAPL in June 2005?", lambda p: [[_price(p, "AAPL", "2005-06")]]),
        # mean over a window (the exact mean of the rounded monthly values)
        (
            "What was the average price of MSFT in 2005?",
            lambda p: [
                [round(sum(_price(p, "MSFT", f"2005-{m:02d}") for m in range(1, 13)) / 12, 2)]
            ],
        ),
        # each month
        (
            "List the monthly prices of IBM from January to March 2008.",
            lambda p: [
                [Month(2008, m).label, _price(p, "IBM", f"2008-{m:02d}")] for m in (1, 2, 3)
            ],
        ),
        # highest of several
        (
            "Which was higher in December 2008, GOOG or AMZN?",
            lambda p: [
                ["GOOG" if _price(p, "GOOG", "2008-12") > _price(p, "AMZN", "2008-12") else "AMZN"]
            ],
        ),
        # which month
        (
            "In which month of 2007 was AAPL most expensive?",
            lambda p: [
                [
                    Month.parse(
                        p[(p.symbol == "AAPL") & p.month.str.startswith("2007")]
                        .sort_values("price", ascending=False)
                        .month.iloc[0]
                    ).label
                ]
            ],
        ),
        # the forecast stage, with the naive double: the value at R carried forward
        ("What will the price of IBM be next month?", lambda p: [[_price(p, "IBM", "2009-03")]]),
    ],
)
def test_question_families_answer_from_the_stock_tables(engine, prices, question, expected) -> None:
    answer = engine.ask(question)
    assert answer.answer == expected(prices)
    read = next(s for s in answer.trace.steps if type(s).__name__ == "ReadStep")
    assert "stock_price_table_" in read.sql and "symbol" in read.sql


def test_a_change_and_a_vs_current_question(engine, prices) -> None:
    change = engine.ask("How much did the price of AMZN change during 2008?")
    first, last = _price(prices, "AMZN", "2008-01"), _price(prices, "AMZN", "2008-12")
    assert change.answer == [[round(last - first, 2)]]
    # The naive double forecasts no change from R's value.
    assert engine.ask("Will the price of MSFT go up next month?").answer == [["No change"]]


def test_answer_texts_use_the_measure_name_and_unit(engine, prices) -> None:
    value = _price(prices, "AAPL", "2005-06")
    english = engine.ask("What was the price of AAPL in June 2005?")
    assert english.text == f"The price (USD) of AAPL in June 2005 was {value:,.2f}."
    chinese = engine.ask("AAPL在2005年6月的价格是多少？")
    assert chinese.text == f"AAPL2005年6月的股价：{value:,.2f}。"


@pytest.mark.parametrize(
    "question",
    [
        "What was the closing price of AAPL in June 2005?",  # the schema's synonyms
        "What was the stock price of AAPL in June 2005?",
        "What was AAPL's share price in June 2005?",
        "2005年6月AAPL的收盘价是多少？",
        "AAPL在2005年6月的股价是多少？",
    ],
)
def test_the_planner_reads_the_schema_words(engine, prices, question) -> None:
    assert engine.ask(question).answer == [[_price(prices, "AAPL", "2005-06")]]


def test_a_latin_name_next_to_chinese_text_is_the_name_alone(engine, prices) -> None:
    answer = engine.ask("AAPL下个月的股价是多少？")
    assert answer.plan.window.expression == "下个月"
    assert answer.answer == [[_price(prices, "AAPL", "2009-03")]]  # the naive double


def test_refusals_say_what_this_corpus_answers(engine) -> None:
    with pytest.raises(QuestionError) as caught:
        engine.ask("What is the rent of AAPL?")
    assert "monthly closing price (USD) of stocks" in caught.value.message
    assert "yuan" not in caught.value.message


def test_an_unknown_symbol_is_named_in_the_schemas_words(engine) -> None:
    with pytest.raises(QuestionError) as caught:
        engine.ask("What will the price of XYZW be next month?")
    assert "no stock" in caught.value.message and "foretab projects" in caught.value.message
    assert "(, )" not in "; ".join(caught.value.suggestions)


def test_units_questions_are_refused_for_a_corpus_without_them(engine) -> None:
    with pytest.raises(QuestionError):
        engine.ask("How many units of AAPL were sold in 2008?")


def test_validation_names_the_mapped_columns(tmp_path: Path, prices) -> None:
    raw = pd.read_csv(STOCKS, dtype=str)
    bad_date = raw.copy()
    bad_date.loc[3, "date"] = "2000-04-01"
    with pytest.raises(IngestError) as caught:
        ingest_frame(bad_date, str(tmp_path / "a.duckdb"), schema=load_schema("stocks"))
    assert "row 5, column 'date'" in caught.value.message and "%b %d %Y" in caught.value.message
    negative = raw.copy()
    negative.loc[0, "price"] = "-1"
    with pytest.raises(IngestError) as caught:
        ingest_frame(negative, str(tmp_path / "b.duckdb"), schema=load_schema("stocks"))
    assert "column 'price'" in caught.value.message and "≥ 0" in caught.value.message
    with pytest.raises(IngestError) as caught:
        ingest_frame(raw.drop(columns=["symbol"]), str(tmp_path / "c.duckdb"))
    assert "missing column(s) city, district, project" in caught.value.message
    assert "--schema" in caught.value.message
    assert not list(tmp_path.iterdir())


def test_a_tampered_stored_schema_is_refused_on_open(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    ingest_path(STOCKS, str(db), R, schema=load_schema("stocks"))
    conn = duckdb.connect(str(db))
    try:
        text = conn.execute("SELECT value FROM foretab_meta WHERE key = 'schema'").fetchone()[0]
        evil = text.replace("Stock Price Table for {year}", "{year.__class__.__mro__}")
        conn.execute("UPDATE foretab_meta SET value = ? WHERE key = 'schema'", [evil])
    finally:
        conn.close()
    with pytest.raises(StoreError) as caught:
        open_history(str(db))
    assert "invalid corpus schema" in caught.value.message


@pytest.mark.slow  # an end-to-end run of several seconds; CI runs it
def test_the_benchmark_builder_adapts_to_the_schema(stocks_db: str, tmp_path: Path) -> None:
    from foretab.bench.qa.build import BuildConfig, build_dataset
    from foretab.bench.qa.evaluate import make_engine, run_benchmark
    from foretab.dataset.items import read_items

    summary = build_dataset(stocks_db, tmp_path / "qa", BuildConfig(seed=0, test_size=40))
    items = [
        i for s in ("train", "val", "test") for i in read_items(tmp_path / "qa" / f"{s}.jsonl")
    ]
    assert items and summary.templates < 60  # units and scope templates do not apply
    for item in items:
        assert " in , " not in item.question and "project_name" not in item.history_sql
        assert all(t.startswith("stock_price_table_") for t in item.tables)
    assert {i.task for i in items} == {"forecast", "reasoning", "history"}
    # With the golden history and future, the engine answers every item exactly.
    engine = make_engine(stocks_db, "gh-gf", None, items)
    try:
        run = run_benchmark(engine, items, ablation="gh-gf")
    finally:
        engine.close()
    wrong = [(r.item.question, r.error) for r in run.results if not r.correct]
    assert not wrong, wrong[:3]


def test_ask_prints_the_entities_in_the_schemas_words(stocks_db: str) -> None:
    from typer.testing import CliRunner

    from foretab.cli.main import app, register_commands

    register_commands()
    question = "What was the price of AAPL in March 2005?"
    result = CliRunner().invoke(app, ["ask", question, "--db", stocks_db], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if "AAPL" in line and "stocks" in line)
    assert row.split() == ["stocks", "AAPL"]  # no empty "(, )" places for a one-level corpus
