"""The planner's passes: claims, jieba segmentation, and refusing what no pass claimed."""

from __future__ import annotations

import pytest

from foretab.core.months import Month
from foretab.core.plan import Aggregate, Comparison, Metric, ScopeOp, Task
from foretab.errors import QuestionError, UnknownEntityError
from foretab.parse.claims import Claims, Pass, Span
from foretab.parse.entities import EntityIndex
from foretab.parse.lang import en, zh
from foretab.parse.leftover import unclaimed
from foretab.parse.parser import parse_question
from foretab.parse.passes import (
    cue_pass,
    entity_pass,
    filler_pass,
    link_pass,
    measure_pass,
    time_pass,
)
from foretab.parse.question import read_question

R = Month(2021, 12)


def test_claims_cover_and_mask() -> None:
    claims = Claims().add([Span(0, 3, Pass.ENTITY), Span(3, 5, Pass.TIME), Span(7, 7, Pass.CUE)])
    assert len(claims.spans) == 2  # the empty span is dropped
    assert claims.covers(1, 5) and not claims.covers(1, 6)
    assert claims.overlaps(4, 9) and not claims.overlaps(5, 9)
    assert claims.mask("abcdefgh") == "#####fgh"
    assert claims.mask("abcdefgh", Pass.TIME) == "abc##fgh"


def test_jieba_keeps_corpus_names_whole(corpus_index: EntityIndex) -> None:
    read = read_question("南京市江宁区绿地理想城下个月的价格是多少？", corpus_index.segmenter)
    assert read.zh
    words = [s.text for s in read.segments]
    assert words[:3] == ["南京市", "江宁区", "绿地理想城"]
    # A name with punctuation inside is still found as one mention.
    text = "苏州市相城区芯城汇二期—芯汇都市景苑2021年3月的均价是多少？"
    mentions = corpus_index.find_mentions(text, read=read_question(text, corpus_index.segmenter))
    assert "芯城汇二期—芯汇都市景苑" in [m.text for m in mentions]


def test_passes_hand_their_claims_forward(corpus_index: EntityIndex) -> None:
    q = "How many units did Greenland Lixiang City in Jiangning, Nanjing sell in 2021?"
    read = read_question(q, corpus_index.segmenter)
    found = entity_pass(read, corpus_index)
    timed = time_pass(found, R)
    assert timed.window is not None and timed.window.expression == "in 2021"
    measured = measure_pass(link_pass(timed, corpus_index))
    assert measured.metric is Metric.UNITS
    claims = cue_pass(measured, ())
    by = {s.by for s in claims.spans}
    assert {Pass.ENTITY, Pass.TIME, Pass.MEASURE} <= by
    assert claims.spans[: len(found.claims.spans)] == found.claims.spans


@pytest.mark.parametrize(
    ("question", "part"),
    [
        ("What was the median price in Longhua, Shenzhen in June 2021?", "median"),
        (
            "What was the resale price of Yan Xihua Mansion in Fengtai, Beijing in May 2021?",
            "resale",
        ),
        ("龙华区2021年6月房价的中位数是多少？", "中位数"),
        ("瑚璟花园2021年3月的二手房价格是多少？", "二手房"),
    ],
)
def test_unclaimed_part_is_refused_by_name(
    corpus_index: EntityIndex, question: str, part: str
) -> None:
    with pytest.raises(QuestionError, match=part):
        parse_question(question, corpus_index, R)


@pytest.mark.parametrize(
    ("question", "cause"),
    [
        ("What was the price per square foot of Poly Xiangsong in Hanyang, Wuhan in May 2021?", "square foot"),
        ("What was the price of Hu Jing Garden in Huangpu, Guangzhou in US dollars in March 2021?", "other units"),
        ("瑚璟花园2021年3月的均价是多少美元？", "美元"),
    ],
)  # fmt: skip
def test_other_units_are_refused_as_units(
    corpus_index: EntityIndex, question: str, cause: str
) -> None:
    with pytest.raises(QuestionError, match=cause) as error:
        parse_question(question, corpus_index, R)
    assert not isinstance(error.value, UnknownEntityError)


@pytest.mark.parametrize(
    "question",
    [
        "请问在2019年7月，南京市雨花台区与杭州市临平区各自销量前三的小区中，哪个小区的均价最高？",
        "请分别告知2021年10月上海市静安区万科中兴路一号和上海市黄浦区翠湖五集的成交套数。",
        "Could you tell me what the price per square metre of Aosen ONE in Changping, Beijing will be next month?",
        "Will the peak price of Daning Jinmaofu in Jing'an, Shanghai be higher than today's price?",
    ],
)
def test_every_word_of_an_answerable_question_is_claimed(
    corpus_index: EntityIndex, question: str
) -> None:
    read = read_question(question, corpus_index.segmenter)
    found = entity_pass(read, corpus_index)
    measured = measure_pass(link_pass(time_pass(found, Month(2022, 12)), corpus_index))
    claims = filler_pass(read, cue_pass(measured, zh.CUES if read.zh else en.CUES))
    assert unclaimed(read, claims) == ()


def test_chinese_window_mean_and_vs_now(corpus_index: EntityIndex) -> None:
    plan = parse_question("溪山美地园去年的均价是多少？", corpus_index, R)
    assert plan.aggregate is Aggregate.MEAN and plan.window.first == Month(2020, 1)
    plan = parse_question("九龙仓天灏明年3月的价格会比现在高吗？", corpus_index, R)
    assert plan.comparison is Comparison.VS_CURRENT
    assert plan.window.first == plan.window.last == Month(2022, 3)


def test_phrasings_found_by_probing(corpus_index: EntityIndex) -> None:
    plan = parse_question("苏州市吴江区2021年3月均价在2万以上的小区有哪些？", corpus_index, R)
    assert plan.scope is not None and plan.scope.op is ScopeOp.FILTER
    assert plan.scope.low == 20000 and plan.scope.high is None
    plan = parse_question("Tell me the cheapest development in Caidian, Wuhan as of November 2021.", corpus_index, R)  # fmt: skip
    assert plan.scope is not None and plan.scope.op is ScopeOp.PICK
    plan = parse_question("How much Luoke Gongyuan in Huqiu, Suzhou sold for in June 2021?", corpus_index, R)  # fmt: skip
    assert plan.metric is Metric.VALUE
    plan = parse_question("Will Jiulong Cangtian Hao in Xiangcheng, Suzhou hit 30000 by June 2022?", corpus_index, R)  # fmt: skip
    assert plan.threshold is not None and plan.threshold.above and plan.task is Task.REASONING
    with pytest.raises(QuestionError, match="floor area"):
        parse_question("How many square metres do flats at Luoke Gongyuan in Huqiu, Suzhou have?", corpus_index, R)  # fmt: skip
    # Words of a polite or chatty question are filler, not refused.
    parse_question("In your view, what will Poly Xiangsong in Hanyang, Wuhan cost next month?", corpus_index, R)  # fmt: skip
    parse_question("Roughly speaking, what did homes at Shoukai Jinmaoxiyue in Huqiu, Suzhou go for in 2020 on average?", corpus_index, R)  # fmt: skip


def test_how_much_more_is_a_numeric_change(corpus_index: EntityIndex) -> None:
    q = "How much more expensive will Hu Jing Garden in Huangpu, Guangzhou be in June 2022 compared to now?"  # fmt: skip
    plan = parse_question(q, corpus_index, R)
    assert plan.change is not None and plan.comparison is Comparison.NONE


def test_chinese_probes(corpus_index: EntityIndex) -> None:
    plan = parse_question("溪山美地园下个月的房价相比现在是涨是跌？", corpus_index, R)
    assert plan.comparison is Comparison.VS_CURRENT
    plan = parse_question("美好香域花境上个月卖了几套？", corpus_index, R)
    assert plan.metric is Metric.UNITS
    plan = parse_question("九龙仓天灏今年以来涨了多少？", corpus_index, R)
    assert plan.change is not None and plan.window.first == Month(2021, 1)
    with pytest.raises(QuestionError, match="同比"):
        parse_question("都湖国际2021年的房价同比增长了多少？", corpus_index, R)
    with pytest.raises(QuestionError, match="值得"):
        parse_question("洛克公园值得买吗？", corpus_index, R)


def test_english_probes(corpus_index: EntityIndex) -> None:
    q = "Did the price of Yan Xihua Mansion in Fengtai, Beijing exceed 50,000 in any month of 2021?"
    assert parse_question(q, corpus_index, R).aggregate is Aggregate.MAX
    q = "Who sold more units in 2021: Dou Hu International or Qifu Tianlong Court in Huadu, Guangzhou?"  # fmt: skip
    assert parse_question(q, corpus_index, R).comparison is Comparison.HIGHEST
    q = "What is the projected change in price for Dou Hu International in Huadu, Guangzhou by the end of 2022?"  # fmt: skip
    assert parse_question(q, corpus_index, R).change is not None
    q = "What was the price spread between the most and least expensive projects in Fengtai, Beijing in 2021?"  # fmt: skip
    with pytest.raises(QuestionError, match="'spread'") as error:
        parse_question(q, corpus_index, R)
    assert not isinstance(error.value, UnknownEntityError)


def test_places_and_facts_the_store_lacks(corpus_index: EntityIndex) -> None:
    with pytest.raises(UnknownEntityError, match="成都市"):
        parse_question("成都市下个月的平均房价是多少？", corpus_index, R)
    with pytest.raises(QuestionError, match="population"):
        parse_question("How many people live in Longhua, Shenzhen?", corpus_index, R)
    with pytest.raises(QuestionError, match="人口"):
        parse_question("武汉市汉阳区有多少人口？", corpus_index, R)
    # "小区" ends in 区 but is no place; a known district is not refused.
    parse_question("武汉市汉阳区2021年5月均价最高的小区是哪个？", corpus_index, R)


def test_projects_weighed_against_a_whole_place_are_refused(corpus_index: EntityIndex) -> None:
    q = "Compare the price of Poly Xiangsong in Hanyang, Wuhan with the Wuhan average in 2021."
    with pytest.raises(QuestionError, match="as a whole"):
        parse_question(q, corpus_index, R)
    with pytest.raises(QuestionError, match="武汉市"):
        parse_question("请比较保利香颂和武汉市平均房价", corpus_index, R)
    # A place that locates the project is no comparison.
    parse_question("请问绿地理想城（南京市江宁区）2020年的平均房价是多少？", corpus_index, R)
