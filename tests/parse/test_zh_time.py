"""Chinese time expressions (docs/design.md §3), relative to R = 2021-12."""

from __future__ import annotations

import pytest

from foretab.core.months import Month
from foretab.parse.zh_time import find_zh_time, zh_number

R = Month(2021, 12)
M = Month

CASES = {
    "下个月": (M(2022, 1), M(2022, 1)),
    "下月": (M(2022, 1), M(2022, 1)),
    "下下个月": (M(2022, 2), M(2022, 2)),
    "上个月": (M(2021, 11), M(2021, 11)),
    "本月": (R, R),
    "目前": (R, R),
    "现在": (R, R),
    "当前": (R, R),
    "下季度": (M(2022, 1), M(2022, 3)),
    "下个季度": (M(2022, 1), M(2022, 3)),
    "本季度": (M(2021, 10), M(2021, 12)),
    "上季度": (M(2021, 7), M(2021, 9)),
    "明年": (M(2022, 1), M(2022, 12)),
    "明年3月": (M(2022, 3), M(2022, 3)),
    "未来半年": (M(2022, 1), M(2022, 6)),
    "未来一年": (M(2022, 1), M(2022, 12)),
    "过去半年": (M(2021, 7), M(2021, 12)),
    "今年以来": (M(2021, 1), M(2021, 12)),
    "今年五月份": (M(2021, 5), M(2021, 5)),
    "去年12月": (M(2020, 12), M(2020, 12)),
    "明年上半年": (M(2022, 1), M(2022, 6)),
    "明年下半年": (M(2022, 7), M(2022, 12)),
    "明年第一季度": (M(2022, 1), M(2022, 3)),
    "今年": (M(2021, 1), M(2021, 12)),
    "去年": (M(2020, 1), M(2020, 12)),
    "前年": (M(2019, 1), M(2019, 12)),
    "未来三个月": (M(2022, 1), M(2022, 3)),
    "未来12个月": (M(2022, 1), M(2022, 12)),
    "接下来两个月": (M(2022, 1), M(2022, 2)),
    "过去六个月": (M(2021, 7), M(2021, 12)),
    "三个月后": (M(2022, 3), M(2022, 3)),
    "2022年3月": (M(2022, 3), M(2022, 3)),
    "2022年3月份": (M(2022, 3), M(2022, 3)),
    "2022年第一季度": (M(2022, 1), M(2022, 3)),
    "2022年第四季度": (M(2022, 10), M(2022, 12)),
    "2022年Q2": (M(2022, 4), M(2022, 6)),
    "2021年上半年": (M(2021, 1), M(2021, 6)),
    "2021年下半年": (M(2021, 7), M(2021, 12)),
    "2022年前两个月": (M(2022, 1), M(2022, 2)),
    "2021年": (M(2021, 1), M(2021, 12)),
    "2021全年": (M(2021, 1), M(2021, 12)),
    "2019年5月至2019年8月": (M(2019, 5), M(2019, 8)),
    "2021年11月到2022年10月期间": (M(2021, 11), M(2022, 10)),
    "从2020年2月到2020年5月": (M(2020, 2), M(2020, 5)),
    "2021年10月至12月期间": (M(2021, 10), M(2021, 12)),
    "2020年1月-2020年6月": (M(2020, 1), M(2020, 6)),
}


@pytest.mark.parametrize(("text", "span"), CASES.items(), ids=list(CASES))
def test_expression(text: str, span: tuple[Month, Month]) -> None:
    found = find_zh_time(f"请问南京市江宁区绿地理想城{text}的均价是多少？", R)
    assert found is not None
    assert (found.window.first, found.window.last) == span
    assert found.window.expression == text


@pytest.mark.parametrize(
    ("text", "months"),
    [
        ("2021年12月与2022年6月", [M(2021, 12), M(2022, 6)]),
        ("2022年5月以及同年12月", [M(2022, 5), M(2022, 12)]),
        ("2019年6月、7月和8月", [M(2019, 6), M(2019, 7), M(2019, 8)]),
        ("2022年的1月份和4月份", [M(2022, 1), M(2022, 4)]),
    ],
)
def test_lists_of_months(text: str, months: list[Month]) -> None:
    found = find_zh_time(f"{text}的成交均价各是多少？", R)
    assert found is not None and found.window.months == months


def test_no_time() -> None:
    assert find_zh_time("绿地理想城的均价是多少？", R) is None


@pytest.mark.parametrize(("text", "n"), [("三", 3), ("十", 10), ("十二", 12), ("两", 2), ("7", 7)])
def test_numerals(text: str, n: int) -> None:
    assert zh_number(text) == n
