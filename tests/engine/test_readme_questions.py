"""README's Questions table: every row is answered in English and Chinese, the same answer.

The README says so of its table; this holds it to that (names compared through the
corpus's Chinese names, numbers to the cent). Future rows read the oracle (exact values).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from foretab.engine import Engine

README = Path(__file__).resolve().parents[2] / "README.md"
_CJK = re.compile(r"[\u4e00-\u9fff]")
# The oracle holds prices only; tests/engine/test_units_future.py checks that future units
# agree in English and Chinese.
_NOT_ON_THE_ORACLE = {"future units"}


def _rows() -> list[tuple[str, str, str]]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Questions", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        question = len(cells) == 3 and cells[1][-1:] in ("?", ".")
        if question and _CJK.search(cells[2]) and not _CJK.search(cells[1]):
            rows.append((cells[0], cells[1], cells[2]))
    return rows


def _zh_names(frame: pd.DataFrame) -> dict[str, str]:
    names: dict[str, str] = {}
    for en, zh in (("project", "project_zh"), ("district", "district_zh"), ("city", "city_zh")):
        names.update(zip(frame[en], frame[zh], strict=True))
    return names


def _same(en: list, zh: list, names: dict[str, str]) -> bool:
    if len(en) != len(zh):
        return False
    for row_en, row_zh in zip(en, zh, strict=True):
        if len(row_en) != len(row_zh):
            return False
        for a, b in zip(row_en, row_zh, strict=True):
            if isinstance(a, float) and isinstance(b, float):
                if abs(a - b) > 0.011:
                    return False
            elif a != b and names.get(str(a)) != b:
                return False
    return True


def test_the_table_has_its_rows() -> None:
    assert len(_rows()) >= 15


@pytest.mark.slow  # the real corpus end to end
@pytest.mark.parametrize(("operation", "en", "zh"), _rows(), ids=[r[0] for r in _rows()])
def test_a_row_is_answered_the_same_in_both_languages(
    corpus_db: str, corpus_frame: pd.DataFrame, operation: str, en: str, zh: str
) -> None:
    if operation in _NOT_ON_THE_ORACLE:
        pytest.skip("the oracle holds prices only (tests/engine/test_units_future.py)")
    with Engine.open(corpus_db, future="oracle") as engine:
        got_en = engine.ask(en).answer
        got_zh = engine.ask(zh).answer
    assert _same(got_en, got_zh, _zh_names(corpus_frame)), (operation, got_en, got_zh)
