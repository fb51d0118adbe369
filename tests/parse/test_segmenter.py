"""Segmenters share jieba's dictionary, loaded once per process, and not each other's words."""

from __future__ import annotations

from foretab.parse import question
from foretab.parse.question import Segmenter


def words(segmenter: Segmenter, text: str) -> list[str]:
    return [s.text for s in segmenter.cut(text)]


def test_each_segmenter_keeps_its_own_names_on_one_loaded_dictionary() -> None:
    plain = Segmenter([])
    named = Segmenter(["瑚璟花园"])
    assert words(named, "瑚璟花园的均价") == ["瑚璟花园", "的", "均价"]
    assert "瑚璟花园" not in words(plain, "瑚璟花园的均价")  # not the other one's word
    assert question._BASE is not None
    base, total = question._BASE
    assert "瑚璟花园" not in base  # the loaded dictionary itself is never added to
    assert named._ready().total == total + 10**6
    assert plain._ready().total == total
