"""The composition matrix (issue 31, docs/design.md §4.1): subject × measure × operation × time.

Every cell is asked in English and Chinese on the real corpus (R = 2021-12, future months
on the oracle: exact values) and its gold is computed here with pandas from the CSV —
never by the engine. Subjects: a project, a district, a city, two of each, every
district of a city, every city; measures: price, units sold; operations: value, sum, change, percent
change, YoY, MoM, each month, which month, compare, rank, count above a threshold,
direction, a window's median, the units-weighted price, every project of a district; times: one past month, a past window, two months, next month. A cell the
engine does not compose is listed in ``REFUSED`` with the word its refusal must name.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from foretab.bench.qa.question_set import same_answer
from foretab.engine import Engine
from foretab.errors import QuestionError

_BUILD = Path(__file__).resolve().parents[1] / "fixtures" / "questions" / "analyst_compose_build.py"
SHARED_CSV = Path(__file__).resolve().parents[3] / "shared" / "data" / "realestate" / "project_prices.csv.gz"  # fmt: skip


def _builder():  # the blind set's pandas helpers (Corpus, Places): no foretab code
    spec = importlib.util.spec_from_file_location("analyst_compose_build", _BUILD)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cells(csv: str) -> list[tuple[str, str, list, bool]]:
    """(cell id, question, gold answer, ordered) for every cell, English and Chinese."""
    b = _builder()
    c = b.Corpus(csv)
    p = b.Places(c)
    q2, label, months = b.q2, b.label, b.months
    gl, jn, jy, nj = "Greenland Lixiang City", "Jiangning District", "Jianye District", "Nanjing"
    zh_gl = "绿地理想城"
    out: list[tuple[str, str, list, bool]] = []

    def add(
        cell: str, en: str, zh: str | None, gold: list, gold_zh: list | None = None, ordered=True
    ):
        out.append((f"{cell}/en", en, gold, ordered))
        if zh is not None:
            out.append((f"{cell}/zh", zh, gold if gold_zh is None else gold_zh, ordered))

    price = lambda m: c.price(gl, jn, m)  # noqa: E731
    # -- project ------------------------------------------------------------------------
    add("project×price×value×month", f"What was the price of {gl} in Jiangning, Nanjing in June 2021?",
        f"南京江宁区{zh_gl}2021年6月的均价是多少？", [[price("2021-06")]])  # fmt: skip
    add("project×units×sum×window", f"How many units did {gl} in Jiangning, Nanjing sell from January to June 2021?",
        f"南京江宁区{zh_gl}2021年1月到6月一共卖了多少套？", [[c.units(gl, jn, "2021-01", "2021-06")]])  # fmt: skip
    add("project×price×change×two months", f"How much did the price of {gl} in Jiangning, Nanjing change from March 2021 to September 2021?",
        f"南京江宁区{zh_gl}2021年3月到9月价格变化了多少？", [[q2(price("2021-09") - price("2021-03"))]])  # fmt: skip
    pct = q2(100 * (price("2021-09") - price("2021-03")) / price("2021-03"))
    add("project×price×percent change×two months", f"By what percent did the price of {gl} in Jiangning, Nanjing change from March 2021 to September 2021?",
        f"南京江宁区{zh_gl}2021年3月到9月涨幅是多少？", [[pct]])  # fmt: skip
    add("project×price×YoY×month", f"What was the YoY change in the price of {gl} in Jiangning, Nanjing in December 2021?",
        f"南京江宁区{zh_gl}2021年12月均价同比变化多少？", [[q2(price("2021-12") - price("2020-12"))]])  # fmt: skip
    add("project×price×MoM×month", f"What was the MoM change in the price of {gl} in Jiangning, Nanjing in November 2021?",
        f"南京江宁区{zh_gl}2021年11月均价环比变化多少？", [[q2(price("2021-11") - price("2021-10"))]])  # fmt: skip
    w = c.window(gl, jn, "2021-10", "2021-12")
    add("project×price×each×window", f"List the price of {gl} in Jiangning, Nanjing for each month from October to December 2021.",
        f"南京江宁区{zh_gl}2021年10月到12月每个月的均价分别是多少", [[label(m), v] for m, v in w.items()])  # fmt: skip
    w = c.window(gl, jn, "2019-01", "2021-12")
    add("project×price×which month×years", f"Which month between 2019 and 2021 had the highest price for {gl} in Jiangning, Nanjing?",
        None, [[label(w.idxmax())]])  # fmt: skip
    t, cur = price("2022-01"), c.current(gl, jn)
    direction = "Increase" if t > cur else "Decrease" if t < cur else "No change"
    add("project×price×direction×next month", f"Will the price of {gl} in Jiangning, Nanjing rise next month?",
        f"南京江宁区{zh_gl}下个月会涨吗？", [[direction]])  # fmt: skip
    w = c.window(gl, jn, "2021-01", "2021-12")
    add("project×price×median×year", f"What was the median monthly price of {gl} in Jiangning, Nanjing in 2021?",
        f"南京江宁区{zh_gl}2021年月均价的中位数是多少？", [[q2(float(w.median()))]])  # fmt: skip
    # -- district -----------------------------------------------------------------------
    add("district×price×value×month", "What was the average price in Jianye, Nanjing in June 2021?",
        "2021年6月南京建邺区的均价是多少？", [[p.mean(nj, jy, "2021-06")]])  # fmt: skip
    add("district×units×sum×month", "How many units were sold in Jianye, Nanjing in June 2021?",
        "2021年6月南京建邺区一共卖了多少套？", [[p.units(nj, jy, "2021-06", "2021-06")]])  # fmt: skip
    add("district×price×change×two months", "How much did the average price in Jiangning, Nanjing change from December 2020 to December 2021?",
        "南京江宁区均价从2020年12月到2021年12月变化了多少？", [[p.change(nj, jn, "2020-12", "2021-12")]])  # fmt: skip
    add("district×price×percent change×two months", "What was the percent change of the average price in Jiangning, Nanjing from December 2020 to December 2021?",
        "南京江宁区2020年12月到2021年12月均价涨幅是多少？", [[p.pct(nj, jn, "2020-12", "2021-12")]])  # fmt: skip
    add("district×price×YoY×month", "What was the YoY change in the average price of Jianye, Nanjing in December 2021?",
        "2021年12月南京建邺区均价同比变化多少？", [[p.change(nj, jy, "2020-12", "2021-12")]])  # fmt: skip
    add("district×price×MoM×month", "What was the MoM change in the average price of Jianye, Nanjing in December 2021?",
        "2021年12月南京建邺区均价环比变化多少？", [[p.change(nj, jy, "2021-11", "2021-12")]])  # fmt: skip
    add("district×price×each×window", "List the average price in Jianye, Nanjing for each month from October to December 2021.",
        None, [[label(m), p.mean(nj, jy, m)] for m in months("2021-10", "2021-12")])  # fmt: skip
    ser = {m: p.mean(nj, jn, m) for m in months("2021-01", "2021-12")}
    add("district×price×which month×year", "In which month of 2021 was the average price in Jiangning, Nanjing highest?",
        None, [[label(max(ser, key=ser.get))]])  # fmt: skip
    rows = p.month_rows(nj, jn, "2021-12")
    add("district×price×count above×month", "How many projects in Jiangning, Nanjing were above 30000 in December 2021?",
        "2021年12月南京江宁区均价高于30000的项目有几个？", [[float((rows.price > 30000).sum())]])  # fmt: skip
    cur, nxt = p.mean(nj, jn, "2021-12"), p.mean(nj, jn, "2022-01")
    direction = "Increase" if nxt > cur else "Decrease" if nxt < cur else "No change"
    add("district×price×direction×next month", "Will the average price in Jiangning, Nanjing rise or fall next month?",
        "下个月南京江宁区均价会涨还是会跌？", [[direction]])  # fmt: skip
    add("district×price×value×next month", "What will the average price in Jianye, Nanjing be next month?",
        "下个月南京建邺区的均价会是多少？", [[p.mean(nj, jy, "2022-01")]])  # fmt: skip
    sold = p.month_rows(nj, jn, "2021-06")
    sold = sold[sold.units_sold > 0]
    weighted = q2(float((sold.price * sold.units_sold).sum() / sold.units_sold.sum()))
    add("district×price×units-weighted×month", "What was the units-weighted average price in Jiangning, Nanjing in June 2021?",
        "2021年6月南京江宁区按成交套数加权的均价是多少？", [[weighted]])  # fmt: skip
    rows = p.month_rows(nj, jy, "2021-12")
    add("district×price×every project×month", "List the price of every project in Jianye, Nanjing in December 2021.",
        "2021年12月南京建邺区每个项目的均价", [[n, float(v)] for n, v in zip(rows.project, rows.price, strict=True)],
        [[n, float(v)] for n, v in zip(rows.project_zh, rows.price, strict=True)], ordered=False)  # fmt: skip
    # -- two districts ------------------------------------------------------------------
    a, b2 = p.mean(nj, jn, "2021-06"), p.mean(nj, jy, "2021-06")
    add("districts×price×compare×month", "Which was more expensive in June 2021, Jiangning or Jianye in Nanjing?",
        "2021年6月南京江宁和建邺哪个区均价更高？", [[jn if a > b2 else jy]], [["江宁区" if a > b2 else "建邺区"]])  # fmt: skip
    ca, cb = p.change(nj, jn, "2021-01", "2021-12"), p.change(nj, jy, "2021-01", "2021-12")
    best = [[jn if ca > cb else jy]] if max(ca, cb) > 0 else [["None"]]
    add("districts×price×compare change×window", "Which rose more from January to December 2021, Jiangning or Jianye in Nanjing?",
        None, best)  # fmt: skip
    both = p.units(nj, jn, "2021-01", "2021-12") + p.units(nj, jy, "2021-01", "2021-12")
    add("districts×units×sum together×year", "How many units did Jiangning and Jianye in Nanjing sell in total in 2021?",
        "2021年南京江宁和建邺一共卖了多少套？", [[both]])  # fmt: skip
    # -- city ---------------------------------------------------------------------------
    add("city×price×value×month", "What was the average price in Nanjing in December 2021?",
        "2021年12月南京的平均房价是多少？", [[p.mean(nj, None, "2021-12")]])  # fmt: skip
    add("city×units×sum×month", "How many units were sold in Nanjing in December 2021?",
        None, [[p.units(nj, None, "2021-12", "2021-12")]])  # fmt: skip
    add("city×price×change×two months", "How much did the average price in Nanjing change from December 2020 to December 2021?",
        None, [[p.change(nj, None, "2020-12", "2021-12")]])  # fmt: skip
    dm = p.district_means(nj, "2021-12")
    zh_d = dict(zip(c.df.district, c.df.district_zh, strict=False))
    top = max(dm, key=dm.get)
    add("city×price×rank districts×month", "Which district of Nanjing had the highest average price in December 2021?",
        "2021年12月南京哪个区均价最高？", [[top]], [[zh_d[top]]])  # fmt: skip
    top3 = sorted(dm, key=dm.get, reverse=True)[:3]
    add("city×price×top 3 districts×month", "Top 3 districts of Nanjing by average price in December 2021?",
        "2021年12月南京均价最高的三个区", [[d] for d in top3], [[zh_d[d]] for d in top3])  # fmt: skip
    add("city×price×every district×month", "List the average price of every district of Nanjing in December 2021.",
        None, [[d, v] for d, v in dm.items()], ordered=False)  # fmt: skip
    nxt = p.district_means(nj, "2022-01")
    add("city×price×rank districts×next month", "Which district of Nanjing will be the most expensive next month?",
        "下个月南京哪个区房价最高？", [[max(nxt, key=nxt.get)]], [[zh_d[max(nxt, key=nxt.get)]]])  # fmt: skip
    # -- every city (no place named) --------------------------------------------------
    zh_c = dict(zip(c.df.city, c.df.city_zh, strict=False))
    cm = {city: p.mean(city, None, "2021-12") for city in sorted(set(c.df.city))}
    top = max(cm, key=cm.get)
    add("cities×price×rank×month", "Which city had the highest average price in December 2021?",
        "2021年12月哪个城市均价最高？", [[top]], [[zh_c[top]]])  # fmt: skip
    low3 = sorted(cm, key=cm.get)[:3]
    add("cities×price×bottom 3×month", "What were the three cheapest cities in December 2021?",
        "2021年12月均价最低的三个城市", [[x] for x in low3], [[zh_c[x]] for x in low3])  # fmt: skip
    add("cities×price×every×month", "List the average price of every city in December 2021.",
        "2021年12月各城市的均价", [[x, v] for x, v in cm.items()], [[zh_c[x], v] for x, v in cm.items()],
        ordered=False)  # fmt: skip
    cu = {city: p.units(city, None, "2021-01", "2021-12") for city in cm}
    add("cities×units×sum together×year", "What were the total units sold across Nanjing and Suzhou in 2021?",
        "南京和苏州2021年合计销量是多少？", [[cu["Nanjing"] + cu["Suzhou"]]])  # fmt: skip
    add("cities×units×rank×year", "Which city sold the most units in 2021?",
        "2021年哪个城市卖得最多？", [[max(cu, key=cu.get)]], [[zh_c[max(cu, key=cu.get)]]])  # fmt: skip
    return out


# Cells refused before any SQL runs, each naming what it cannot compose.
REFUSED = {
    "district×units×next month": ("How many units will be sold in Jianye, Nanjing next month?", "units"),
    "project×price×YoY×window": (
        "What was the YoY change in the price of Greenland Lixiang City in Jiangning, Nanjing in 2021?",
        "YoY",
    ),
    "district×price×median×month": ("What was the median price in Longhua, Shenzhen in June 2021?", "median"),
    "district×price×units-weighted×next month": (
        "What will the units-weighted average price in Jiangning, Nanjing be next month?",
        "weighted",
    ),
    "district×price×mean together×year": (
        "What was the average price of Nanjing and Suzhou combined in 2021?",
        "combined",
    ),
    "projects×units×sum together×year": (
        "How many units did Greenland Lixiang City and Poly Yue Plaza in Jiangning, Nanjing sell altogether in 2021?",
        "altogether",
    ),
    "district×price×every project×max": (
        "What was the highest price of every project in Jianye, Nanjing in 2021?",
        "highest",
    ),
}  # fmt: skip


@pytest.mark.slow  # the real corpus end to end
def test_every_cell_answers_its_pandas_gold(corpus_db: str) -> None:
    matrix = cells(str(SHARED_CSV))
    assert len(matrix) >= 45
    wrong = []
    with Engine.open(corpus_db, future="oracle") as engine:
        for cell, question, gold, ordered in matrix:
            try:
                got = engine.ask(question).answer
            except QuestionError as error:
                wrong.append((cell, question, f"refused: {error.message}"))
                continue
            if not same_answer(got, gold, ordered):
                wrong.append((cell, question, f"got {got}, want {gold}"))
    assert not wrong, wrong


@pytest.mark.slow
@pytest.mark.parametrize(("question", "word"), REFUSED.values(), ids=list(REFUSED))
def test_a_cell_not_composed_is_refused_naming_it(corpus_db: str, question: str, word: str) -> None:
    with (
        Engine.open(corpus_db, future="oracle") as engine,
        pytest.raises(QuestionError, match=word),
    ):
        engine.ask(question)
