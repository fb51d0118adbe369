"""The meaning check (docs/design.md §4.2): a span the plan does not carry is refused, naming it.

Each question below would otherwise be answered as a neighbouring question (the span
dropped); the refusal names the span and the canonical question that was read.
"""

from __future__ import annotations

import pytest

from foretab.core.canonical import canonical
from foretab.core.months import Month
from foretab.core.plan import PlaceOp
from foretab.errors import QuestionError, UnknownEntityError
from foretab.parse.entities import EntityIndex
from foretab.parse.parser import parse_question

R = Month(2021, 12)
GL = "Greenland Lixiang City in Jiangning, Nanjing"


@pytest.mark.parametrize(
    ("question", "span"),
    [
        (f"What was the price of {GL} in March 2021 vs 2019?", "'2019'"),
        (f"What was the price of {GL} in 2021 compared with 2019?", "'2019'"),
        ("Which projects in Jiangning, Nanjing rose more than 10 percent in 2021?", "'10'"),
        ("How many districts of Nanjing were above 30000 in December 2021?", "'30000'"),
        ("2021年12月南京哪个区均价最高，和2019年比呢？", "2019"),
        # units are summed: an average of them is not the total (answered as it before)
        (f"What will the average monthly units sold of {GL} be in 2022?", "'average'"),
        (f"What were the average monthly units sold of {GL} in 2021?", "'average'"),
        ("Which project in Huqiu, Suzhou sold the most units on average in 2021?", "'on average'"),
        ("南京江宁区绿地理想城2021年平均每月卖多少套？", "平均"),
        # "the highest project" without 哪个 was answered with the district's mean
        ("2021年苏州虎丘区平均房价最高的项目", "最高"),
        ("苏州虎丘区2021年房价最低的楼盘", "最低"),
        # a difference between two subjects was read as each one's change to next month
        (f"How much cheaper is Poly Banhuyuan than {GL}?", "'how much cheaper'"),
        ("南京江宁区绿地理想城比保利伴湖院贵多少？", "贵多少"),
        # months counted, ordinals and a price's total were dropped
        (f"In how many months of 2021 was the price of {GL} above 21000?", "'how many months'"),
        ("南京江宁区绿地理想城2021年有几个月均价高于21000？", "几个月"),
        (f"What was the second highest price of {GL} in 2021?", "'second'"),
        ("Which is the third cheapest project in Huqiu, Suzhou?", "'third'"),
        (f"What was the total price of {GL} in 2021?", "'total'"),
        # a second time the time rules did not read was dropped
        (f"What was the price of {GL} last year and this year?", "'this year'"),
        ("南京江宁区绿地理想城去年和今年的均价是多少？", "今年"),
        # a value no bound carries
        (f"Will the price of {GL} be 20000 next month?", "'20000'"),
        # a length of time or a calendar edge no time rule read: answered as "now"
        (f"What will the price of {GL} be after six months?", "'six months'"),
        (f"What will the price of {GL} be by year end?", "'year end'"),
        ("南京江宁区绿地理想城过两周均价多少？", "两周"),
        # a superlative the plan did not carry: answered with the district's mean before
        ("What was the lowest price in Jiangning, Nanjing in 2021?", "'lowest'"),
        # "compared with" the month before: answered with last month alone
        (
            "How many units did Jiangning, Nanjing sell last month compared with the month before?",
            "'compared with'",
        ),
        # 最差 without 哪个: answered with the district's total units
        ("南京江宁区2021年卖得最差的项目", "最差"),
        # a place's past rise or fall: refused in English before, now in Chinese
        ("南京江宁区的均价去年涨了还是跌了？", "变化了多少"),
        # a bound on the time named: answered for the time itself before
        (f"What was the price of {GL} before 2021?", "'before'"),
        (f"What was the price of {GL} after June 2021?", "'after'"),
        # ... and for June alone (the start of the months was never named)
        (f"What was the average price of {GL} until June 2021?", "'until'"),
        (f"What was the average price of {GL} through June 2021?", "'through'"),
        (f"What was the price of {GL} till June?", "'till'"),
        (f"What was the price of {GL} before June?", "'before'"),
    ],
)
def test_a_dropped_span_is_refused_naming_it(
    corpus_index: EntityIndex, question: str, span: str
) -> None:
    with pytest.raises(QuestionError, match=span):
        parse_question(question, corpus_index, R)


@pytest.mark.parametrize(
    ("question", "op", "words"),
    [
        ("Which district of Wuhan had the highest average price in December 2021?", PlaceOp.RANK,
         ("district of Wuhan", "highest", "December 2021")),
        ("How many projects in Huadu were above 15000 in Dec 2021?", PlaceOp.COUNT,
         ("how many", "above 15,000", "December 2021")),
        ("How much did the average price in Jiangning change from Dec 2020 to Dec 2021?",
         PlaceOp.CHANGE, ("change", "Jiangning District", "December 2020 to December 2021")),
        ("percent change in average price of Pudong between Jan 2021 and Dec 2021",
         PlaceOp.CHANGE, ("percent change", "Pudong New Area")),
        ("most expensive district in shanghai last month", PlaceOp.RANK,
         ("district of Shanghai", "highest", "November 2021")),
        ("Which was more expensive on average in 2021, Jiangning or Jianye?", PlaceOp.COMPARE,
         ("Jiangning District", "Jianye District", "highest")),
        ("Will the average price in Jiangning, Nanjing rise or fall next month?",
         PlaceOp.DIRECTION, ("rises or falls", "January 2022")),
    ],
)  # fmt: skip
def test_the_issue_examples_carry_every_span_in_their_canonical_question(
    corpus_index: EntityIndex, question: str, op: PlaceOp, words: tuple[str, ...]
) -> None:
    plan = parse_question(question, corpus_index, R)
    assert plan.place is not None and plan.place.op is op
    text = canonical(plan)
    for word in words:
        assert word in text, (word, text)


def test_a_misspelt_name_is_asked_back_not_answered(corpus_index: EntityIndex) -> None:
    q = "What was the price of Greenland Lixang City in Jiangning, Nanjing in May 2021?"
    with pytest.raises(UnknownEntityError, match="did you mean Greenland Lixiang City"):
        parse_question(q, corpus_index, R)
    plan = parse_question(q.replace("Lixang", "Lixiang"), corpus_index, R)
    assert plan.assumption == ""


def test_a_misspelt_place_as_the_subject_is_asked_back(corpus_index: EntityIndex) -> None:
    q = "What was the average price in Jiangnig, Nanjing in June 2021?"
    with pytest.raises(UnknownEntityError, match="'Jiangnig'; did you mean Jiangning"):
        parse_question(q, corpus_index, R)
    plan = parse_question(
        "What will Poly Banhuyuan in Jiangnig, Nanjng cost next month?", corpus_index, R
    )
    assert [ref.name for ref in plan.entities] == ["Poly Banhuyuan"]


@pytest.mark.parametrize(
    ("question", "bounds"),
    [
        ("2021年苏州虎丘区销量超过50套的项目有几个？", "高于50的"),
        ("2021年12月苏州虎丘区均价在20000到25000之间的项目有几个？", "在20,000到25,000之间的"),
    ],
)
def test_a_chinese_count_reads_its_bounds_in_chinese(
    corpus_index: EntityIndex, question: str, bounds: str
) -> None:
    text = canonical(parse_question(question, corpus_index, R))
    assert bounds in text, text
    assert not any(word in text for word in ("above", "below", "between", "at least")), text


@pytest.mark.parametrize(
    "question",
    [
        f"What was the price of {GL} in the second quarter of 2021?",
        f"What is the lowest price {GL} will reach in the second and third quarters of 2022, i.e. from April to September 2022?",
        "南京江宁区绿地理想城2021年第二季度的均价是多少？",
        f"What is the difference between the price of {GL} in December 2020 and December 2021?",
        f"How much lower will the price of {GL} be next month?",
        "What will the total units sold in Pudong, Shanghai be in 2022?",
        f"How many units did {GL} sell in 2021?",
    ],
)
def test_the_same_words_are_read_where_a_plan_carries_them(
    corpus_index: EntityIndex, question: str
) -> None:
    parse_question(question, corpus_index, R)  # no refusal


def test_a_fall_below_a_value_is_a_threshold_in_chinese(corpus_index: EntityIndex) -> None:
    """明年会跌破20000吗 was answered as whether the price falls, the 20000 dropped."""
    plan = parse_question("南京江宁区绿地理想城明年会跌破20000吗？", corpus_index, R)
    assert plan.threshold is not None
    assert (plan.threshold.above, plan.threshold.value) == (False, 20000.0)


def test_the_months_named_counted_back_are_not_a_length_of_time(
    corpus_index: EntityIndex,
) -> None:
    # "these two months" names the months listed, not a span after now (RETQA val 1598)
    plan = parse_question(
        "请问广州市白云区的华润置地·广州润府小区，在2021年11月与2022年10月这两个月的成交均价分别是多少？",
        corpus_index,
        R,
    )
    assert plan.window.only == (Month(2021, 11), Month(2022, 10))


def test_gone_up_is_a_change(corpus_index: EntityIndex) -> None:
    # "gone up since January 2021" was answered with the window's mean
    plan = parse_question(f"Has the price of {GL} gone up since January 2021?", corpus_index, R)
    assert plan.change is not None or plan.comparison.value != "none"
    assert "rises or falls" in canonical(plan)


def test_most_transactions_ranks_by_units(corpus_index: EntityIndex) -> None:
    # "成交最多" was ranked by price
    plan = parse_question("武汉哪个区2021年成交最多？", corpus_index, R)
    assert plan.place is not None and plan.place.op is PlaceOp.RANK
    assert plan.metric.value == "units"
