"""A Chinese refusal of a fact the store does not hold names that fact in Chinese.

The labels come from the corpus schema (``[[phrasing.refusals_zh]]`` in realestate.toml);
they read "这个问题问的是other facts（其他信息）" until the labels were written in Chinese.
"""

from __future__ import annotations

import re

import pytest

from foretab.errors import QuestionError
from foretab.parse.lexicon import default_lexicon
from foretab.parse.refuse import check_refusals

_LATIN = re.compile(r"[A-Za-z]")


@pytest.mark.parametrize(
    ("question", "label", "word"),
    [
        ("保利中央公园是哪家开发商建的？", "开发商", "开发商"),
        ("保利中央公园的户型有哪些？", "面积或户型", "户型"),
        ("江宁区的租金是多少？", "租金", "租金"),
        ("保利中央公园每平方英尺多少钱？", "以其他货币或面积单位计的价格", "平方英尺"),
        ("南京的常住人口是多少？", "人口或经济", "常住人口"),
        ("保利中央公园下个月的均价扣除税费是多少？", "其他信息", "税"),
    ],
)
def test_a_chinese_refusal_names_the_fact_in_chinese(question: str, label: str, word: str) -> None:
    with pytest.raises(QuestionError) as refused:
        check_refusals(question, zh=True)
    message = str(refused.value)
    assert message.startswith(f"这个问题问的是{label}（“{word}”）"), message


def test_every_chinese_label_of_the_default_schema_is_chinese() -> None:
    lexicon = default_lexicon()
    assert lexicon.refusals_zh, "the default schema has Chinese refusals"
    for _pattern, what in lexicon.refusals_zh:
        assert not _LATIN.search(what), what
