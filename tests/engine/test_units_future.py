"""Future units-sold questions (issue 30, item 3) against gold computed apart from the engine.

The gold reads the mini corpus CSV with pandas and calls the store's units model directly
on each project's last 12 months; the engine goes plan → read (SQL guard) → units source
→ analyzer. They agree only if the engine reads, lays out, forecasts and sums the right
series.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest

from foretab.core.months import Month
from foretab.engine import Engine
from foretab.errors import ForecastError, ForetabError, QuestionError
from foretab.forecast import units_store
from foretab.forecast.source import ModelSource
from foretab.forecast.units_store import UNITS_ARTIFACT, UnitsStoreModel, train_units_model
from foretab.store import open_history
from foretab.store.ingest import ingest_path
from tests.conftest import MINI_CSV
from tests.doubles import NaiveStoreModel

REF = Month(2021, 12)
SH, HP, PD = "Shanghai", "Huangpu District", "Pudong New Area"


@pytest.fixture(scope="module")
def units_db(tmp_path_factory: pytest.TempPathFactory, units_fit_once: object) -> str:
    """The mini store with its units model (the real configuration: 300 rounds), trained and
    saved by ``train_units_model``; its fit is the one the golden units cases use (the same
    history: ``units_fit_once``)."""
    db = str(tmp_path_factory.mktemp("units") / "mini.duckdb")
    ingest_path(MINI_CSV, db, REF)
    with open_history(db) as store, pytest.MonkeyPatch.context() as patch:
        patch.setattr(units_store, "fit_units_store_model", units_fit_once)
        assert train_units_model(store, REF)
    return db


@pytest.fixture(scope="module")
def engine(units_db: str) -> Iterator[Engine]:
    # The price model is the naive double: only the units source is under test.
    with Engine.open(
        units_db, future_source=lambda e: ModelSource.with_store_dates(NaiveStoreModel(), e.store)
    ) as opened:
        yield opened


@pytest.fixture(scope="module")
def model(units_db: str) -> UnitsStoreModel:
    with open_history(units_db) as store:
        data = store.load_artifact(UNITS_ARTIFACT)
    assert data is not None
    return UnitsStoreModel.from_bytes(data)


@pytest.fixture(scope="module")
def csv() -> pd.DataFrame:
    return pd.read_csv(MINI_CSV)


def _last_year(csv: pd.DataFrame, district: str, project: str) -> np.ndarray:
    rows = csv[(csv.city == SH) & (csv.district == district) & (csv.project == project)]
    by_month = dict(zip(rows.month, rows.units_sold, strict=True))
    return np.array([[float(by_month.get((REF - 11 + k).iso, np.nan)) for k in range(12)]])


class _Gold:
    """Units as recorded for R+1..R+h: ``p × count`` and the interval rule of the docs.

    docs/calibration.md: the 10% end is the count model's when the row probability
    ``p ≥ 0.9``, else 0; the 90% end is the count model's when ``p > 0.1``, else 0.
    """

    def __init__(self, model: UnitsStoreModel, history: np.ndarray, h: int) -> None:
        raw = model.predict(history, h)
        assert raw.active is not None
        self.value = raw.active * raw.value
        self.lo = np.minimum(np.where(raw.active >= 0.9, raw.lo, 0.0), self.value)
        self.hi = np.maximum(np.where(raw.active > 0.1, raw.hi, 0.0), self.value)


def _monthly(model: UnitsStoreModel, csv: pd.DataFrame, district: str, project: str, h: int):
    """The model's forecast for R+1..R+h, from the CSV's rows (not the engine's read)."""
    return _Gold(model, _last_year(csv, district, project), h)


def test_one_project_next_month_with_its_interval(engine, model, csv) -> None:
    got = engine.ask(
        "How many units will Bund Garden in Huangpu District, Shanghai sell next month?"
    )
    want = _monthly(model, csv, HP, "Bund Garden", 1)
    assert got.answer == [[round(float(want.value[0, 0]), 2)]]
    (interval,) = got.intervals
    assert interval.lo == pytest.approx(want.lo[0, 0], abs=0.01)
    assert interval.hi == pytest.approx(want.hi[0, 0], abs=0.01)
    assert f"(80%: {want.lo[0, 0]:,.0f}–{want.hi[0, 0]:,.0f})" in got.text
    forecast_step = next(s for s in got.trace.steps if s.stage == "forecast")
    assert forecast_step.implementation == "model:units_poisson"


def test_next_quarter_is_the_sum_of_three_months(engine, model, csv) -> None:
    got = engine.ask(
        "How many units will Bund Garden in Huangpu District, Shanghai sell next quarter?"
    )
    want = _monthly(model, csv, HP, "Bund Garden", 3)
    total = sum(round(float(v), 2) for v in want.value[0])
    assert got.answer[0][0] == pytest.approx(total, abs=0.011)
    assert "ends of the project-month 80% intervals added up" in got.text
    (interval,) = got.intervals
    assert interval.lo == pytest.approx(float(want.lo[0].sum()), abs=0.05)
    assert interval.hi == pytest.approx(float(want.hi[0].sum()), abs=0.05)


def test_a_window_spanning_now_adds_observed_and_forecast_months(engine, model, csv) -> None:
    got = engine.ask(
        "How many units will Bund Garden in Huangpu District, Shanghai sell from "
        "November 2021 to February 2022?"
    )
    rows = csv[(csv.district == HP) & (csv.project == "Bund Garden")]
    observed = float(rows[rows.month.isin(["2021-11", "2021-12"])].units_sold.sum())
    want = _monthly(model, csv, HP, "Bund Garden", 2)
    total = observed + sum(round(float(v), 2) for v in want.value[0])
    assert got.answer[0][0] == pytest.approx(total, abs=0.011)
    (interval,) = got.intervals  # the observed months move neither end
    assert interval.lo == pytest.approx(observed + float(want.lo[0].sum()), abs=0.05)


def test_a_district_total_and_its_best_seller_in_2022(engine, model, csv) -> None:
    # candidates: the district's projects with a row in R−11..R (docs/design.md §4)
    recent = csv[(csv.city == SH) & (csv.district == PD) & (csv.month >= (REF - 11).iso)]
    totals = {}
    for project in sorted(recent.project.unique()):
        monthly = _monthly(model, csv, PD, project, 12).value[0]
        totals[project] = sum(round(float(v), 2) for v in monthly)
    assert len(totals) >= 3
    got = engine.ask("What will the total units sold in Pudong, Shanghai be in 2022?")
    assert got.answer[0][0] == pytest.approx(sum(totals.values()), abs=0.05)
    best = max(totals, key=lambda p: totals[p])
    pick = engine.ask("Which project in Pudong, Shanghai will sell the most units in 2022?")
    assert pick.answer == [[best]]
    assert "no probability" in pick.text
    top = engine.ask("What are the top 2 best-selling projects in Pudong, Shanghai next year?")
    ranked = sorted(totals, key=lambda p: -totals[p])
    assert top.answer == [[ranked[0]], [ranked[1]]]


def test_chinese_questions_agree_with_english(engine) -> None:
    en = engine.ask(
        "How many units will Bund Garden in Huangpu District, Shanghai sell next month?"
    )
    zh = engine.ask("上海市黄浦区外滩花园下个月的销量是多少？")
    assert zh.answer == en.answer
    assert "80%区间" in zh.text
    en_total = engine.ask(
        "What will the total units sold in Huangpu District, Shanghai be in 2022?"
    )
    zh_total = engine.ask("上海市黄浦区2022年的总销量是多少？")
    assert zh_total.answer == en_total.answer
    assert "各项目各月80%区间上下限之和" in zh_total.text


@pytest.mark.parametrize(
    ("question", "named"),
    [
        ("Will Bund Garden in Huangpu District, Shanghai sell more than 50 units next month?", "a threshold"),
        ("Which of Bund Garden or Xintiandi Court in Huangpu, Shanghai will sell more units next year?", "a comparison"),
        ("In which month of 2022 will Bund Garden in Huangpu District, Shanghai sell the most units?", "the month with the most"),
        ("How many projects in Pudong, Shanghai will sell more than 50 units in 2022?", "a place as a whole"),
        ("Among the three best-selling projects in Huangpu District, Shanghai in 2022, which will have the lowest price?", "ranking by units sold needs past months"),
        ("How many units will Bund Garden in Huangpu District, Shanghai sell in 2023?", "December 2022"),
    ],
)  # fmt: skip
def test_what_the_units_model_cannot_answer_is_refused_by_name(
    engine: Engine, question: str, named: str
) -> None:
    with pytest.raises(ForetabError) as err:
        engine.ask(question)
    assert named in err.value.message


def test_the_oracle_does_not_answer_future_units(units_db: str) -> None:
    with Engine.open(units_db, future="oracle") as oracle:
        past = oracle.ask(
            "How many units did Bund Garden in Huangpu District, Shanghai sell in 2021?"
        )
        assert past.answer[0][0] > 0
        with pytest.raises(QuestionError, match="units sold are not read from the future store"):
            oracle.ask(
                "How many units will Bund Garden in Huangpu District, Shanghai sell next month?"
            )


def test_a_store_trained_before_units_models_names_the_fix(mini_duckdb: str) -> None:
    with open_history(mini_duckdb) as store:
        assert store.load_artifact(UNITS_ARTIFACT) is None
    with Engine.open(
        mini_duckdb,
        future_source=lambda e: ModelSource.with_store_dates(NaiveStoreModel(), e.store),
    ) as old:
        past = old.ask("How many units did Bund Garden in Huangpu District, Shanghai sell in 2021?")
        assert past.answer[0][0] > 0
        price = old.ask(
            "What will the price of Bund Garden in Huangpu District, Shanghai be next month?"
        )
        assert price.answer
        with pytest.raises(ForecastError) as err:
            old.ask(
                "How many units will Bund Garden in Huangpu District, Shanghai sell next month?"
            )
    assert "no units model is stored" in err.value.message
    assert any("foretab train --db DB" in s for s in err.value.suggestions)


def test_the_units_gold_is_not_the_price_model(engine, csv) -> None:
    # The naive price double carries the last price forward; a units answer must not.
    got = engine.ask(
        "How many units will Bund Garden in Huangpu District, Shanghai sell next month?"
    )
    rows = csv[(csv.district == HP) & (csv.project == "Bund Garden") & (csv.month == REF.iso)]
    assert got.answer[0][0] != float(rows.avg_price.iloc[0])


def test_a_follow_up_carries_units_into_the_future(engine, model, csv) -> None:
    talk = engine.conversation()
    past = talk.ask("How many units did Bund Garden in Huangpu District, Shanghai sell in 2021?")
    rows = csv[
        (csv.district == HP) & (csv.project == "Bund Garden") & csv.month.str.startswith("2021")
    ]
    assert past.answer.answer == [[float(rows.units_sold.sum())]]
    later = talk.ask("and next quarter?")
    want = _monthly(model, csv, HP, "Bund Garden", 3)
    total = sum(round(float(v), 2) for v in want.value[0])
    assert later.answer.answer[0][0] == pytest.approx(total, abs=0.011)
    zh = engine.conversation()
    zh.ask("上海市黄浦区外滩花园下个月的价格是多少？")
    units = zh.ask("换成销量")
    assert units.answer.answer == [
        [round(float(_monthly(model, csv, HP, "Bund Garden", 1).value[0, 0]), 2)]
    ]
