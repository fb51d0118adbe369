"""Golden files: question → Plan → SQL → history → answer on the mini corpus, both backends.

``tests/fixtures/golden/mini.jsonl`` holds one case per line. Regenerate after an intended
change with ``FORETAB_REGEN_GOLDEN=1 python -m pytest tests/golden -k duckdb`` and review
the diff: every changed line is a changed answer.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import pytest

from foretab.core.answer import plan_doc
from foretab.core.months import Month
from foretab.engine import Engine
from foretab.errors import ForetabError
from foretab.forecast.source import ModelSource
from foretab.forecast.units_source import UnitsSource
from foretab.forecast.units_store import UnitsStoreModel
from foretab.store import HistoryStore
from tests.doubles import NaiveStoreModel, SpreadStoreModel

#: ``tests.units_fit.fit_once`` (the ``units_fit_once`` fixture).
FitUnits = Callable[[pd.DataFrame, Month], UnitsStoreModel]

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "golden" / "mini.jsonl"
QUESTIONS: list[tuple[str, str]] = [
    # (future source, question)
    ("oracle", "What will the price of Bund Garden in Huangpu District, Shanghai be next month?"),
    ("oracle", "What will the price of 外滩花园 in 黄浦区, 上海市 be next month?"),
    ("oracle", "What was the price of Poly Garden in Huangpu District, Guangzhou in March 2021?"),
    # Same project name in the other Huangpu District: no price that month, and the
    # Guangzhou row must not stand in for it.
    ("oracle", "What was the price of Poly Garden in Huangpu, Shanghai in March 2021?"),
    ("oracle", "What will the price of Poly Garden be next month?"),
    ("oracle", "Which of Bund Garden or Xintiandi Court in Huangpu, Shanghai will see a bigger price increase next year?"),
    ("oracle", "Will the price of Old Harbour Lofts in Huangpu District, Shanghai rise next month?"),
    ("oracle", "Which will be more expensive in June 2022, Zhujiang New Town Mansion or Tianhe Park Residence in Tianhe District, Guangzhou?"),
    ("oracle", "What will the monthly prices of Science City Residence in Huangpu District, Guangzhou be from February to May 2022?"),
    ("oracle", "What was the highest price of Century Park Residence in Pudong New Area, Shanghai in 2021?"),
    ("oracle", "What will the mean price of O'Neill Bay in Pudong, Shanghai be in the first half of next year?"),
    ("oracle", "Which of Jinqiao Court, Sanlin Estate or Huamu Terrace in Pudong, Shanghai will rise by March 2022?"),
    ("naive", "What will the price of Lujiazui Pearl in Pudong, Shanghai be in March 2022?"),
    # issue 10 families: scope, units, change, threshold, which-month, no time, Chinese
    ("oracle", "Which project in Pudong, Shanghai was cheapest in March 2021?"),
    ("oracle", "What are the top 3 most expensive projects in Huangpu, Shanghai next month?"),
    ("oracle", "What was the average price in Tianhe and Huangpu, Guangzhou respectively in May 2021?"),
    ("oracle", "Which projects in Pudong, Shanghai had a price between 40000 and 75000 in June 2021?"),
    ("oracle", "Among the three best-selling projects in Huangpu District, Shanghai in 2021, which had the lowest price?"),
    ("oracle", "How many projects in Tianhe, Guangzhou had sales in December 2021?"),
    ("oracle", "How many units did Bund Garden in Huangpu District, Shanghai sell in 2021?"),
    ("oracle", "By what percentage will the price of Bund Garden in Huangpu District, Shanghai change by March 2022?"),
    ("oracle", "How much did the price of Century Park Residence in Pudong, Shanghai change during 2021?"),
    ("oracle", "Will the price of Xintiandi Court in Huangpu, Shanghai be above 90,000 in February 2022?"),
    ("oracle", "In which month of 2021 was Sanlin Estate in Pudong, Shanghai most expensive?"),
    ("oracle", "Is Old Harbour Lofts in Huangpu District, Shanghai going up?"),
    ("oracle", "Who is the developer of Bund Garden in Huangpu District, Shanghai?"),
    ("oracle", "上海市黄浦区外滩花园下个月的价格是多少？"),
    ("oracle", "请问在2021年3月，上海市浦东新区哪个小区的房价最低？"),
    ("oracle", "请问在2021年6月，上海市黄浦区的外滩花园和新天地公馆这两个小区的成交均价各是多少？"),
    ("naive", "Which of Yuzhu Terrace or Dasha Garden in Huangpu District, Guangzhou will be cheaper next month?"),
    # Stale: its history ends in 2019, so the model has nothing to forecast from.
    ("naive", "What will the price of Chebei Lofts in Tianhe District, Guangzhou be next month?"),
    # issue 30: districts' direction with a probability (from the naive forecast with a
    # stated spread: it has a distribution),
    # ranked by change (never by price), and several places each asked whether they rise
    ("spread", "Will the average price in Pudong, Shanghai rise next month?"),
    ("spread", "上海浦东新区的均价下个月会涨吗？"),
    ("spread", "Which district of Shanghai will rise the most next year?"),
    ("spread", "上海哪个区明年涨得最多？"),
    ("spread", "Will the average price in Tianhe District, Guangzhou be above 50000 next month?"),
    ("spread", "Will the average prices of Tianhe and Huangpu, Guangzhou rise next year?"),
    ("oracle", "Which district of Shanghai rose the most in 2021?"),
    ("oracle", "广州哪个区2021年跌得最多？"),
    # issue 30: future units sold, from the units model fitted on the mini store's history
    ("units", "How many units will Bund Garden in Huangpu District, Shanghai sell next month?"),
    ("units", "How many units will Xintiandi Court in Huangpu, Shanghai sell next quarter?"),
    ("units", "How many units will Bund Garden in Huangpu District, Shanghai sell from November 2021 to February 2022?"),
    ("units", "What will the total units sold in Pudong, Shanghai be in 2022?"),
    ("units", "Which project in Pudong, Shanghai will sell the most units in 2022?"),
    ("units", "上海市黄浦区外滩花园下个月的销量是多少？"),
    ("units", "上海市浦东新区2022年的总销量是多少？"),
    ("units", "Will Bund Garden in Huangpu District, Shanghai sell more than 50 units next month?"),
    ("oracle", "How many units will Old Harbour Lofts in Huangpu District, Shanghai sell next month?"),
]  # fmt: skip


def engine_for(db: str, future: str, fit_units: FitUnits) -> Engine:
    if future == "naive":
        return Engine.open(
            db, future_source=lambda e: ModelSource.with_store_dates(NaiveStoreModel(), e.store)
        )
    if future == "spread":
        return Engine.open(
            db, future_source=lambda e: ModelSource.with_store_dates(SpreadStoreModel(), e.store)
        )
    if future == "units":
        return Engine.open(
            db,
            future_source=lambda e: ModelSource.with_store_dates(
                NaiveStoreModel(),
                e.store,
                units=lambda: UnitsSource(mini_units_model(e.store, fit_units)),
            ),
        )
    return Engine.open(db, future=future)  # type: ignore[arg-type]


def mini_units_model(store: HistoryStore, fit_units: FitUnits) -> UnitsStoreModel:
    """The units model fitted on the store's history (as `foretab train` would, ~1.3 s): the
    DuckDB and PostgreSQL mini stores hold the same history, and so does
    tests/engine/test_units_future.py's store, so it is fitted once (``units_fit_once``)."""
    assert store.reference_month is not None
    return fit_units(store.panel(summed=True), store.reference_month)


class Engines:
    """One engine per (store, future source), kept for the module: answering every case on a
    warm engine is what a server does (and checks that no state leaks from one question to
    the next), and it saves building an engine (guard worker, indexes, model) per case."""

    def __init__(self, fit_units: FitUnits) -> None:
        self._open: dict[tuple[str, str], Engine] = {}
        self._fit_units = fit_units

    def get(self, db: str, future: str) -> Engine:
        if (db, future) not in self._open:
            self._open[(db, future)] = engine_for(db, future, self._fit_units)
        return self._open[(db, future)]

    def close(self) -> None:
        for engine in self._open.values():
            engine.close()
        self._open.clear()


@pytest.fixture(scope="module")
def engines(units_fit_once: FitUnits) -> Iterator[Engines]:
    kept = Engines(units_fit_once)
    yield kept
    kept.close()


def run_case(engine: Engine, future: str, question: str) -> dict[str, object]:
    try:
        answer = engine.ask(question)
    except ForetabError as error:
        return {"future": future, "question": question, "error": error.to_dict()}
    doc = answer.to_doc()
    return {
        "future": future,
        "question": question,
        "plan": plan_doc(answer.plan).model_dump(mode="json"),
        "sql": doc.sql,
        "params": doc.params,
        "history": [h.model_dump(mode="json") for h in doc.history],
        "forecast": [f.model_dump(mode="json", exclude={"basis"}) for f in doc.forecast],
        "answer": doc.answer,
        "text": doc.text,
    }


def load_golden() -> dict[str, dict[str, object]]:
    return {question: json.loads(line) for question, line in golden_lines().items()}


def golden_case(question: str) -> dict[str, object]:
    """The golden case of ``question``, parsed afresh from its line."""
    return json.loads(golden_lines()[question])


_GOLDEN_LINES: dict[object, dict[str, str]] = {}


def golden_lines() -> dict[str, str]:
    """Each golden case's line by its question, read again whenever the file changes.

    Read once per version of the file rather than once per case: parsing the whole file
    took ~7 ms of each of the 96 cases.
    """
    stat = GOLDEN.stat() if GOLDEN.exists() else None
    key = (stat.st_mtime_ns, stat.st_size, stat.st_ino) if stat else None
    if key not in _GOLDEN_LINES:
        _GOLDEN_LINES.clear()
        lines = GOLDEN.read_text(encoding="utf-8").splitlines() if stat else []
        _GOLDEN_LINES[key] = {json.loads(line)["question"]: line for line in lines}
    return _GOLDEN_LINES[key]


def test_every_question_has_a_golden_case() -> None:
    assert set(load_golden()) == {q for _, q in QUESTIONS}


def test_regenerate_golden_files(mini_duckdb: str, engines: Engines) -> None:
    if os.environ.get("FORETAB_REGEN_GOLDEN") != "1":
        pytest.skip("set FORETAB_REGEN_GOLDEN=1 to rewrite tests/fixtures/golden/mini.jsonl")
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    with GOLDEN.open("w", encoding="utf-8") as handle:
        for future, question in QUESTIONS:
            handle.write(
                json.dumps(
                    run_case(engines.get(mini_duckdb, future), future, question), ensure_ascii=False
                )
            )
            handle.write("\n")


@pytest.mark.parametrize(("future", "question"), QUESTIONS, ids=[q[:60] for _, q in QUESTIONS])
def test_golden_case(mini_db: str, engines: Engines, future: str, question: str) -> None:
    want = golden_case(question)
    got = run_case(engines.get(mini_db, future), future, question)
    if mini_db.startswith("postgresql"):
        # The SQL text is the guard's rendering for its dialect; rows and answers must agree.
        want, got = dict(want), dict(got)
        want.pop("sql", None)
        got.pop("sql", None)
    assert got == want


def test_an_overlong_question_is_refused_before_parsing(mini_duckdb: str) -> None:
    from foretab.errors import QuestionError
    from foretab.limits import MAX_QUESTION_CHARS

    question = "What will the price of Bund Garden be next month? " * 20
    assert len(question) > MAX_QUESTION_CHARS
    with (
        Engine.open(mini_duckdb, future="oracle") as engine,
        pytest.raises(QuestionError, match="500"),
    ):
        engine.ask(question)
