"""Every question family on the real corpus with ``--future oracle``.

Expected answers are computed here from the CSV with pandas, a path independent of the
engine (parse → retrieve → SQL → analyze): they must agree exactly.
"""

from __future__ import annotations

import pandas as pd
import pytest

from foretab.core.months import Month
from foretab.engine import Engine
from foretab.errors import UnknownEntityError

# The real corpus end to end (its ingest alone is ~4 s); CI runs it.
pytestmark = pytest.mark.slow

R = Month(2021, 12)


@pytest.fixture(scope="module")
def engine(corpus_db: str) -> Engine:
    eng = Engine.open(corpus_db, future="oracle")
    yield eng  # type: ignore[misc]
    eng.close()


@pytest.fixture(scope="module")
def prices(corpus_frame: pd.DataFrame) -> dict[tuple[str, str, str], dict[str, float]]:
    out: dict[tuple[str, str, str], dict[str, float]] = {}
    for city, district, project, month, price in corpus_frame[
        ["city", "district", "project", "month", "avg_price"]
    ].itertuples(index=False):
        out.setdefault((city, district, project), {})[month] = float(price)
    return out


@pytest.fixture(scope="module")
def trio(prices: dict[tuple[str, str, str], dict[str, float]]) -> list[tuple[str, str, str]]:
    """Three Jiangning (Nanjing) projects observed in Dec 2021 and every month of 2022."""
    months = [f"2022-{m:02d}" for m in range(1, 13)] + ["2021-12"]
    chosen = sorted(
        k
        for k, v in prices.items()
        if k[:2] == ("Nanjing", "Jiangning District")
        and all(m in v for m in months)
        and "," not in k[2]
        and " or " not in k[2].lower()
        and " and " not in k[2].lower()
    )
    assert len(chosen) >= 3, "fixture assumption: the corpus has such projects"
    return chosen[:3]


def r2(x: float) -> float:
    return round(x, 2)


def vals(prices, key, months: list[str]) -> list[float]:
    return [r2(prices[key][m]) for m in months]


def q2022(first: int, last: int) -> list[str]:
    return [f"2022-{m:02d}" for m in range(first, last + 1)]


def label(iso: str) -> str:
    return Month.parse(iso).label


def test_one_project_one_month(engine: Engine, prices, trio) -> None:
    a = trio[0]
    ans = engine.ask(
        f"What will the average price of {a[2]} in Jiangning, Nanjing be in March 2022?"
    )
    assert ans.answer == [[r2(prices[a]["2022-03"])]]
    assert ans.trace.future_source == "oracle"


def test_one_project_aggregates(engine: Engine, prices, trio) -> None:
    a = trio[0]
    months = q2022(4, 9)
    values = [prices[a][m] for m in months]
    where = f"{a[2]} in Jiangning District, Nanjing"
    mean = engine.ask(
        f"What will be the average of the monthly average prices of {where} from April to September 2022?"
    )
    assert mean.answer == [[r2(sum(vals(prices, a, months)) / len(months))]] or mean.answer == [
        [r2(sum(values) / len(values))]
    ]
    high = engine.ask(
        f"What will be the highest average price of {where} between April and September 2022?"
    )
    assert high.answer == [[r2(max(values))]]
    low = engine.ask(
        f"What is the lowest average price {where} will reach in the second and third quarters of 2022, i.e. from April to September 2022?"
    )
    assert low.answer == [[r2(min(values))]]


def test_one_project_each_month(engine: Engine, prices, trio) -> None:
    a = trio[1]
    ans = engine.ask(
        f"Give the monthly average prices of {a[2]} in Jiangning, Nanjing for each month of the first quarter of 2022."
    )
    assert ans.answer == [[label(m), r2(prices[a][m])] for m in q2022(1, 3)]


def test_several_projects(engine: Engine, prices, trio) -> None:
    a, b = trio[0], trio[1]
    ans = engine.ask(
        f"What will the average prices of {a[2]} and {b[2]} in Jiangning District, Nanjing be next month?"
    )
    assert ans.answer == [[a[2], r2(prices[a]["2022-01"])], [b[2], r2(prices[b]["2022-01"])]]
    each = engine.ask(
        f"List the average price of {a[2]} and {b[2]} in Jiangning District, Nanjing for each of the next two months."
    )
    assert each.answer == [[p[2], label(m), r2(prices[p][m])] for p in (a, b) for m in q2022(1, 2)]


def test_vs_current(engine: Engine, prices, trio) -> None:
    a = trio[2]
    target = r2(max(prices[a][m] for m in q2022(1, 6)))
    current = r2(prices[a]["2021-12"])
    want = "Increase" if target > current else "Decrease" if target < current else "No change"
    ans = engine.ask(
        f"Will the highest average price of {a[2]} in Jiangning, Nanjing in the first half of next year be higher or lower than the current price?"
    )
    assert ans.answer == [[want]]


def test_which_rise_and_rises_most(engine: Engine, prices, trio) -> None:
    months = q2022(1, 12)
    change = {
        p: r2(sum(prices[p][m] for m in months) / 12) - r2(prices[p]["2021-12"]) for p in trio
    }
    names = " , ".join(p[2] for p in trio[:-1]) + f" and {trio[-1][2]}"
    rise = engine.ask(
        f"Among {names} in Jiangning, Nanjing, which will have a higher average price next year than now?"
    )
    risers = [[p[2]] for p in trio if change[p] > 0]
    assert rise.answer == (risers or [["None"]])
    most = engine.ask(
        f"Which of {names} in Jiangning District, Nanjing will see the biggest increase in average price next year compared with now?"
    )
    best = max(trio, key=lambda p: change[p])
    assert most.answer == ([[best[2]]] if change[best] > 0 else [["None"]])


def test_highest(engine: Engine, prices, trio) -> None:
    a, b = trio[0], trio[1]
    ans = engine.ask(
        f"Which will have the higher average price in June 2022, {a[2]} or {b[2]} in Jiangning, Nanjing?"
    )
    want = a if r2(prices[a]["2022-06"]) >= r2(prices[b]["2022-06"]) else b
    assert ans.answer == [[want[2]]]


def test_history_question(engine: Engine, prices, trio) -> None:
    a = trio[0]
    ans = engine.ask(f"What was the average price of {a[2]} in Jiangning, Nanjing this month?")
    assert ans.answer == [[r2(prices[a]["2021-12"])]]
    assert ans.trace.future_source == "none needed"
    assert ans.trace.tables == ("project_price_table_jiangning_district_nanjing_2021",)


def test_greenland_lixiang_city_2021(engine: Engine, prices) -> None:
    key = ("Nanjing", "Jiangning District", "Greenland Lixiang City")
    ans = engine.ask(
        "What was the average price of Greenland Lixiang City in Jiangning, Nanjing in each month of 2021?"
    )
    assert ans.answer == [
        [label(m), r2(prices[key][m])] for m in sorted(prices[key]) if m.startswith("2021")
    ]


def test_unknown_project_suggests(engine: Engine) -> None:
    with pytest.raises(UnknownEntityError) as info:
        engine.ask(
            "What will the average price of Crystal Palace in Jiangning, Nanjing be next month?"
        )
    assert "Crystal Palace" in info.value.message
    assert info.value.suggestions  # close matches within Jiangning District


def test_typo_is_asked_back_and_a_lowercase_name_links(engine: Engine, prices) -> None:
    with pytest.raises(UnknownEntityError, match="did you mean Greenland Lixiang City"):
        engine.ask(
            "What was the average price of greenland lixiang cty in jiangning district nanjing "
            "last month?"
        )
    ans = engine.ask(
        "What was the average price of greenland lixiang city in jiangning district nanjing "
        "last month?"
    )
    assert ans.plan.entities[0].name == "Greenland Lixiang City"
