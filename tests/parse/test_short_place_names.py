"""Place names as people type them (issue 31): 南京, 江宁, 浦东 resolve like 南京市, 江宁区."""

from __future__ import annotations

import pytest

from foretab.core.months import Month
from foretab.errors import UnknownEntityError
from foretab.parse.entities import EntityIndex
from foretab.parse.parser import parse_question

R = Month(2021, 12)


@pytest.mark.parametrize(
    ("question", "name", "inner"),
    [
        ("南京江宁区绿地理想城去年均价多少", "Greenland Lixiang City", "Jiangning District"),
        ("南京江宁绿地理想城2021年3月的均价", "Greenland Lixiang City", "Jiangning District"),
        ("武汉江岸区绿城武汉黄浦湾2021年6月的均价是多少", "Greentown Wuhan Huangpu Bay", "Jiang'an District"),
        ("苏州虎丘区璞玥风华2021年9月成交均价", "Pu Yue Fenghua", "Huqiu District"),
        ("上海浦东大华锦绣华城2021年12月的均价", "Dahua Jinxiu Huacheng", "Pudong New Area"),
    ],
)  # fmt: skip
def test_short_city_and_district_names(
    corpus_index: EntityIndex, question: str, name: str, inner: str
) -> None:
    plan = parse_question(question, corpus_index, R)
    assert [(e.name, e.inner) for e in plan.entities] == [(name, inner)]


def test_a_short_city_name_is_a_place_subject(corpus_index: EntityIndex) -> None:
    plan = parse_question("2021年12月武汉哪个区均价最高？", corpus_index, R)
    assert plan.place is not None and {s.outer for s in plan.scopes} == {"Wuhan"}
    assert len(plan.scopes) == 15  # every district of Wuhan, ranked


def test_a_chinese_typo_gets_a_did_you_mean(corpus_index: EntityIndex) -> None:
    with pytest.raises(UnknownEntityError, match="did you mean 绿地理想城") as error:
        parse_question("南京江宁区绿地里想城2021年5月均价", corpus_index, R)
    assert "绿地理想城" in error.value.suggestions
