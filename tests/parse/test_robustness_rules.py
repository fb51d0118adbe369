"""One test per rule added for unseen phrasings (see tests/engine/test_robustness.py).

Time expressions are checked on their own; cue rules through ``parse_question`` over the
real corpus's project list, each with a question that needs the rule.
"""

from __future__ import annotations

import pytest

from foretab.core.months import Month
from foretab.errors import AmbiguousEntityError, QuestionError, UnknownEntityError
from foretab.parse.entities import EntityIndex
from foretab.parse.parser import parse_question
from foretab.parse.timexpr import find_time_expression

R = Month(2021, 12)


@pytest.mark.parametrize(
    ("text", "first", "last"),
    [
        # "the end / start of" any period: its edge month
        ("By the end of Q2 2022, what will it cost?", "2022-06", "2022-06"),
        ("at the start of the second half of 2022", "2022-07", "2022-07"),
        ("by the end of next quarter", "2022-03", "2022-03"),
        ("at the close of the first half of next year", "2022-06", "2022-06"),
        # "in N months", "N months ago"
        ("how much will it cost in 5 months?", "2022-05", "2022-05"),
        ("in two months", "2022-02", "2022-02"),
        ("in a year", "2022-12", "2022-12"),
        ("three months ago", "2021-09", "2021-09"),
        ("a year ago", "2020-12", "2020-12"),
        ("in the first 5 months of 2022", "2022-01", "2022-05"),
        # other spellings of halves, years and months
        ("in the year ahead", "2022-01", "2022-12"),
        ("in 2H 2022", "2022-07", "2022-12"),
        ("1H of 2022", "2022-01", "2022-06"),
        ("in 2022 March", "2022-03", "2022-03"),
        ("year-end 2022", "2022-12", "2022-12"),
        ("by 2022 year-end", "2022-12", "2022-12"),
        # month ranges written as lists or with a bare hyphen
        ("Feb-May 2022", "2022-02", "2022-05"),
        ("during January-March 2022", "2022-01", "2022-03"),
        ("in July and August 2022", "2022-07", "2022-08"),
        ("in the months of July and August 2022", "2022-07", "2022-08"),
        ("in March, April and May 2022", "2022-03", "2022-05"),
        ("for Jan, Feb and Mar 2022", "2022-01", "2022-03"),
        ("from 2022-02 to 2022-05", "2022-02", "2022-05"),
        # a named month or quarter without a year: the next one after R (past: the latest)
        ("next March", "2022-03", "2022-03"),
        ("this coming March", "2022-03", "2022-03"),
        ("by next June", "2022-06", "2022-06"),
        ("next year's June", "2022-06", "2022-06"),
        ("next Q1", "2022-01", "2022-03"),
        ("in the third quarter", "2022-07", "2022-09"),
        ("What was it in the third quarter?", "2021-07", "2021-09"),
        # past: "since", "the most recent price"
        ("since January 2021", "2021-01", "2021-12"),
        ("the most recent price of X", "2021-12", "2021-12"),
        ("its last recorded price", "2021-12", "2021-12"),
    ],
)
def test_time_expression(text: str, first: str, last: str) -> None:
    window = find_time_expression(text, R)
    assert (window.first.iso, window.last.iso) == (first, last)


def test_as_a_whole_is_left_for_the_aggregate() -> None:
    window = find_time_expression("over 2021 as a whole", R)
    assert "whole" not in window.expression


# question, projects, first, last, aggregate, task, comparison, measure
PLANS = [
    # price-level verbs: "cost the most", "worth more", "more valuable", "greater price"
    ("which is going to cost the most next month jiangjing bay in hannan wuhan or donghu "
     "jinmaofu in hongshan wuhan", "Jiangjing Bay;Donghu Jinmaofu", "2022-01", "2022-01",
     "value", "reasoning", "highest", "absolute"),
    ("Which one is going to be more valuable in December 2022, Poly Xiangsong or Yu Longxuhui "
     "Bandao in Hanyang, Wuhan?", "Poly Xiangsong;Yu Longxuhui Bandao", "2022-12", "2022-12",
     "value", "reasoning", "highest", "absolute"),
    ("Which one has a greater price, Poly Xiangsong or Yu Longxuhui Bandao in Hanyang, Wuhan, "
     "in September 2022?", "Poly Xiangsong;Yu Longxuhui Bandao", "2022-09", "2022-09",
     "value", "reasoning", "highest", "absolute"),
    ("Will China Merchants Gongyuan 1872 in Hanyang, Wuhan be worth more at the end of 2022 "
     "than it is now?", "China Merchants Gongyuan 1872", "2022-12", "2022-12", "value",
     "reasoning", "vs_current", "absolute"),
    # "how high ... go", "at most", "high point": the window's extreme, not a direction
    ("In the fourth quarter of 2022, how high will the price of China Overseas Jiu Feng Li "
     "Phase 1 in Songjiang, Shanghai go at most?", "China Overseas Jiu Feng Li Phase 1",
     "2022-10", "2022-12", "max", "forecast", "none", "absolute"),
    ("How low will the price of Poly Xiangsong in Hanyang, Wuhan fall in 2022?",
     "Poly Xiangsong", "2022-01", "2022-12", "min", "forecast", "none", "absolute"),
    ("What will the low point of Poly Xiangsong's price in Hanyang, Wuhan be in 2022?",
     "Poly Xiangsong", "2022-01", "2022-12", "min", "forecast", "none", "absolute"),
    ("What will the high point of Poly Xiangsong's price in Hanyang, Wuhan be in 2022?",
     "Poly Xiangsong", "2022-01", "2022-12", "max", "forecast", "none", "absolute"),
    # "under today's price"; "lowest monthly price" stays an aggregate in a comparison
    ("Will any of Shoukai Jinmaoxiyue, Luoke Gongyuan or Pu Yue Fenghua in Huqiu, Suzhou have "
     "a lowest monthly price next year that is under today's price? Which ones?",
     "Shoukai Jinmaoxiyue;Luoke Gongyuan;Pu Yue Fenghua", "2022-01", "2022-12", "min",
     "reasoning", "which_fall", "absolute"),
    # "fall further", "higher expected growth rate"
    ("in relative terms which will fall further by june 2022 hejingyu shan international or "
     "poly china overseas jin di daguo jing in zengcheng guangzhou",
     "Hejingyu Shan International;Poly China Overseas Jin Di Daguo Jing", "2022-06", "2022-06",
     "value", "reasoning", "falls_most", "relative"),
    ("Which of Wuhan Chengjian Taihe Wuhan Yuanzi and Wuhan Zhongguo Jiankang Gu in Caidian, "
     "Wuhan has the higher expected growth rate over the second half of 2022?",
     "Wuhan Chengjian Taihe Wuhan Yuanzi;Wuhan Zhongguo Jiankang Gu", "2022-07", "2022-12",
     "mean", "reasoning", "rises_most", "relative"),
    # polite requests are not yes/no questions; a yes/no clause after a comma is one
    ("Can you tell me the prices of Diexi Garden and Jinshi Garden in Zengcheng, Guangzhou in "
     "March 2022?", "Diexi Garden;Jinshi Garden", "2022-03", "2022-03", "value", "forecast",
     "none", "absolute"),
    ("Compared with this month, will Tianyue Siji City in Linping District, Hangzhou be "
     "cheaper in 3 months' time?", "Tianyue Siji City", "2022-03", "2022-03", "value",
     "reasoning", "vs_current", "absolute"),
    ("Can you tell me if Poly Banhuyuan in Jiangning, Nanjing will be cheaper next month?",
     "Poly Banhuyuan", "2022-01", "2022-01", "value", "reasoning", "vs_current", "absolute"),
    # a comma inside a wh-question does not open a yes/no clause
    ("What is the lowest monthly average price each of Poly Xiangsong and Yu Longxuhui Bandao "
     "in Hanyang, Wuhan will see in 2022?", "Poly Xiangsong;Yu Longxuhui Bandao", "2022-01",
     "2022-12", "min", "forecast", "none", "absolute"),
    # "cheaper or pricier": both comparatives are the direction
    ("compared to the current price will xishanmei diyuan in longhua shenzhen be cheaper or "
     "pricier in the third quarter of 2022", "Xishanmei Diyuan", "2022-07", "2022-09", "mean",
     "reasoning", "vs_current", "absolute"),
    # "compared with now", "compare with the current price", "hold its value"
    ("What will happen to the price of Hailun International in Qingshan, Wuhan next month "
     "compared with now?", "Hailun International", "2022-01", "2022-01", "value", "reasoning",
     "vs_current", "absolute"),
    ("How will Poly Xiangsong's price in Hanyang, Wuhan in March 2022 compare with the current "
     "price?", "Poly Xiangsong", "2022-03", "2022-03", "value", "reasoning", "vs_current",
     "absolute"),
    ("Will Poly Xiangsong in Hanyang, Wuhan hold its value in June 2022?", "Poly Xiangsong",
     "2022-06", "2022-06", "value", "reasoning", "vs_current", "absolute"),
    # "be up / down compared to now"
    ("Which of Poly Xiangsong and Yu Longxuhui Bandao in Hanyang, Wuhan will be down compared "
     "to now in April 2022?", "Poly Xiangsong;Yu Longxuhui Bandao", "2022-04", "2022-04",
     "value", "reasoning", "which_fall", "absolute"),
    # "greater than its current price", "than at present", "become cheaper ... versus today"
    ("Will the highest monthly price of Qifu Tianlong Court in Huadu, Guangzhou during 2022 be "
     "greater than its current price?", "Qifu Tianlong Court", "2022-01", "2022-12", "max",
     "reasoning", "vs_current", "absolute"),
    ("Which of Qifu Tianlong Court and Yuexiu Binhu Zhen Pinxi in Huadu, Guangzhou will have a "
     "higher price in May 2022 than at present?", "Qifu Tianlong Court;Yuexiu Binhu Zhen Pinxi",
     "2022-05", "2022-05", "value", "reasoning", "which_rise", "absolute"),
    ("Which of Qifu Tianlong Court and Yuexiu Binhu Zhen Pinxi in Huadu, Guangzhou are expected "
     "to become cheaper over the next quarter compared with today?",
     "Qifu Tianlong Court;Yuexiu Binhu Zhen Pinxi", "2022-01", "2022-03", "mean", "reasoning",
     "which_fall", "absolute"),
    ("Which of Qifu Tianlong Court and Yuexiu Binhu Zhen Pinxi in Huadu, Guangzhou will be "
     "cheaper in May 2022 compared with today?", "Qifu Tianlong Court;Yuexiu Binhu Zhen Pinxi",
     "2022-05", "2022-05", "value", "reasoning", "which_fall", "absolute"),
    # "as a whole": one number for the window
    ("What were the average prices of Hailun International and Jiangnan Chuncheng in Qingshan, "
     "Wuhan over 2021 as a whole?", "Hailun International;Jiangnan Chuncheng", "2021-01",
     "2021-12", "mean", "history", "none", "absolute"),
    # other spellings and misspellings of places
    ("What will Guanggu Weilai City in the East Lake High Tech Development Zone of Wuhan cost "
     "next month?", "Guanggu Weilai City", "2022-01", "2022-01", "value", "forecast", "none",
     "absolute"),
    ("price of Ming Yue Fanghua in the Wuhan Economic and Technological Development Zone next "
     "month", "Ming Yue Fanghua", "2022-01", "2022-01", "value", "forecast", "none", "absolute"),
    ("What will Poly Banhuyuan in Jiangnig, Nanjng cost next month?", "Poly Banhuyuan",
     "2022-01", "2022-01", "value", "forecast", "none", "absolute"),
]  # fmt: skip


@pytest.mark.parametrize("row", PLANS, ids=[row[0][:60] for row in PLANS])
def test_cue_rule(row: tuple[str, ...], corpus_index: EntityIndex) -> None:
    question, projects, first, last, aggregate, task, comparison, measure = row
    plan = parse_question(question, corpus_index, R)
    assert [p.name for p in plan.entities] == projects.split(";")
    assert (plan.window.first.iso, plan.window.last.iso) == (first, last)
    assert (plan.aggregate.value, plan.task.value) == (aggregate, task)
    assert (plan.comparison.value, plan.measure.value) == (comparison, measure)


@pytest.mark.parametrize(
    ("question", "error"),
    [
        # an unknown place is reported before the ambiguity it causes
        ("What will the price of Vanke City in Chengdu be next month?", UnknownEntityError),
        ("What will the price of Vanke City be next month?", AmbiguousEntityError),
        # a misspelt place is tolerated, a misspelt project that is no place is not
        ("What will Xyzzy Garden in Hanyang, Wuhan cost in June 2022?", UnknownEntityError),
    ],
)
def test_entity_errors(
    question: str, error: type[QuestionError], corpus_index: EntityIndex
) -> None:
    with pytest.raises(error):
        parse_question(question, corpus_index, R)


def test_unknown_lone_word_is_named_as_place_or_project(corpus_index: EntityIndex) -> None:
    with pytest.raises(UnknownEntityError, match="project, district or city 'Chengdu'"):
        parse_question(
            "What is the price of Poly Banhuyuan in Chengdu next month?", corpus_index, R
        )
