"""Entity linking on the real corpus's 5,634 projects: partial names, case, errors, speed."""

from __future__ import annotations

import time

import pytest

from foretab.core.months import Month
from foretab.errors import AmbiguousEntityError, QuestionError, UnknownEntityError
from foretab.parse.entities import EntityIndex
from foretab.parse.parser import parse_question
from foretab.parse.text import normalize


def names(index: EntityIndex, question: str) -> list[tuple[str, str]]:
    return [(p.name, p.inner) for p in index.link(question).entities]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Vanke Feicui Gongyuan in Jiangning, Nanjing", [("Vanke Feicui Gongyuan", "Jiangning District")]),
        ("vanke feicui gongyuan in jiangning district", [("Vanke Feicui Gongyuan", "Jiangning District")]),
        ("Wan He Guanggu in Wuhan's East Lake High-tech Zone", [("Wan He Guanggu", "East Lake High-tech Zone")]),
        ("Wan He Guanggu, East Lake, Wuhan", [("Wan He Guanggu", "East Lake High-tech Zone")]),
        ("Vanke Daduhui Homeland in Baoan", [("Vanke Daduhui Homeland", "Bao'an District")]),
        ("Vanke Daduhui Homeland in Bao'an District, Shenzhen City", [("Vanke Daduhui Homeland", "Bao'an District")]),
        ("VANKE DADUHUI HOMELAND", [("Vanke Daduhui Homeland", "Bao'an District")]),
        ("Poly Tianhui in Tianhe, Guangzhou", [("Poly Tianhui", "Tianhe District")]),
        ("Poly Tianhui in Shanghai", [("Poly Tianhui", "Yangpu District")]),
        ("Tongzhou Wanguo City MOM in Tongzhou, Beijing", [("Tongzhou Wanguo City MOM Λ", "Tongzhou District")]),
        ("Guangda ONE in Zengcheng, Guangzhou", None),
        ("Vanke Zuoan or Vanke Dajia in Industrial Park", [("Vanke Zuoan", "Industrial Park"), ("Vanke Dajia", "Industrial Park")]),
        ("Vanke Dajia, Vanke Zuoan and Vanke Langshi in Suzhou", [("Vanke Dajia", "Industrial Park"), ("Vanke Zuoan", "Industrial Park"), ("Vanke Langshi", "Industrial Park")]),
        ("Jiangning Jinmaoyue in Jiangning District", [("Jiangning Jinmaoyue", "Jiangning District")]),
        ("Xiangjiang Villa in Changping, Beijing", [("Xiangjiang Villa Phase 2", "Changping District")]),  # partial
        ("万科翡翠公园", None),
    ],
)  # fmt: skip
def test_links(corpus_index: EntityIndex, question: str, expected: list | None) -> None:
    if expected is None:
        assert len(corpus_index.link(question).entities) == 1
    else:
        assert names(corpus_index, question) == expected


def test_spacing_variant_links_the_same_project(corpus_index: EntityIndex, corpus_entries) -> None:
    entry = next(e for e in corpus_entries if e.name == "Zhengrongyuelongfu")
    linked = corpus_index.link(f"Zhengrong Yuelongfu in {entry.inner}, {entry.outer}")
    assert [p.name for p in linked.entities] == ["Zhengrongyuelongfu"]


def test_every_unique_name_links_to_itself(corpus_index: EntityIndex, corpus_entries) -> None:
    """Each project, named with its district and city, links to exactly itself."""
    for entry in corpus_entries[::7]:
        question = f"What will the price of {entry.name} in {entry.inner}, {entry.outer} be?"
        linked = corpus_index.link(question)
        assert [(p.name, p.inner) for p in linked.entities] == [(entry.name, entry.inner)], question


def test_unknown_project_names_the_text_and_suggests(corpus_index: EntityIndex) -> None:
    with pytest.raises(UnknownEntityError, match="Crystal Palace") as caught:
        corpus_index.link("What will Crystal Palace in Jiangning District, Nanjing cost?")
    assert caught.value.suggestions
    assert all("Jiangning District" in s for s in caught.value.suggestions)


def test_project_outside_the_named_district_is_an_error(corpus_index: EntityIndex) -> None:
    with pytest.raises(UnknownEntityError, match="Vanke Zuoan") as caught:
        corpus_index.link("Vanke Zuoan in Jiangning District, Nanjing")
    assert any("Industrial Park" in s for s in caught.value.suggestions)


def test_duplicate_name_without_place_is_ambiguous(corpus_index: EntityIndex) -> None:
    with pytest.raises(AmbiguousEntityError, match="Poly Tianhui") as caught:
        corpus_index.link("Poly Tianhui next month")
    assert len(caught.value.suggestions) == 2


def test_partial_name_matching_several_projects_is_ambiguous(corpus_index: EntityIndex) -> None:
    with pytest.raises(QuestionError, match="Jinmaoyue") as caught:
        corpus_index.link("What about Jinmaoyue in Jiangning, Nanjing?")
    assert len(caught.value.suggestions) >= 2


def test_no_project_at_all_is_an_error(corpus_index: EntityIndex) -> None:
    with pytest.raises(UnknownEntityError, match="no project"):
        corpus_index.link("What will prices in Jiangning District, Nanjing do next month?")


def test_normalisation() -> None:
    assert normalize("Bao'an District") == normalize("baoan district") == "baoan district"
    assert normalize("Wuhan's") == "wuhan"
    assert normalize("Lujin Shanghai Pai ＋") == "lujin shanghai pai"


def test_parse_is_fast(corpus_index: EntityIndex) -> None:
    questions = [
        "What will the average price of Vanke Feicui Gongyuan in Jiangning, Nanjing be next month?",
        "Which of Vanke Zuoan or Vanke Dajia in Industrial Park, Suzhou will rise the most next year?",
        "what was the lowest price of wanda zuanshi bay in pudong in 2021",
        "What will Xiangjiang Villa in Changping, Beijing cost from February to May 2022?",
    ]
    for question in questions:  # warm up
        parse_question(question, corpus_index, Month(2021, 12))
    timings = []
    for _ in range(20):
        for question in questions:
            start = time.perf_counter()
            parse_question(question, corpus_index, Month(2021, 12))
            timings.append(time.perf_counter() - start)
    timings.sort()
    assert timings[len(timings) // 2] < 0.010  # p50 well under the 20 ms Engine.ask budget


def test_typos_are_asked_back_never_linked(corpus_index: EntityIndex, corpus_entries) -> None:
    """A dropped letter is refused with "did you mean" the right project; never a wrong link.

    A misspelt name is a guess at another name (docs/design.md §2): the refusal names the
    closest project so the user can ask again. (A typo that spells another real project's
    full name is that project, and a dropped space is the same name: skipped.)
    """
    exact = {normalize(e.name) for e in corpus_entries}
    suggested = 0
    checked = 0
    for number, entry in enumerate(corpus_entries[::5]):
        name = entry.name
        if len(name) < 8:
            continue
        cut = 1 + number % (len(name) - 2)
        typo = name[:cut] + name[cut + 1 :]
        if normalize(typo) in exact or name[cut] == " ":
            continue
        checked += 1
        question = f"What will {typo} in {entry.inner}, {entry.outer} cost next month?"
        try:
            projects = corpus_index.link(question).entities
        except QuestionError as error:
            suggested += error.suggestions[:1] == (f"{name} ({entry.inner}, {entry.outer})",)
            continue
        # a letter dropped next to a question word ("Jiu Fuming i") leaves a part of the name
        assert [(p.name, p.inner) for p in projects] == [(name, entry.inner)], question
    assert checked >= 300
    assert suggested >= 0.85 * checked


def test_a_misspelt_name_is_refused_naming_the_right_one(corpus_index: EntityIndex) -> None:
    with pytest.raises(UnknownEntityError, match=r"did you mean Vanke Feicui Gongyuan \("):
        corpus_index.link("Vanke Feicui Gongyan in Jiangning")


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("南京江宁区Greenland Lixiang City2021年1月的均价是多少？", ("Greenland Lixiang City", "Jiangning District")),
        ("深圳宝安区Vanke Daduhui Homeland2021年1月的均价是多少？", ("Vanke Daduhui Homeland", "Bao'an District")),
        ("WuhanEast Lake High-tech ZoneWan He Guanggu2021年1月的均价是多少？", ("Wan He Guanggu", "East Lake High-tech Zone")),
    ],
)  # fmt: skip
def test_a_name_glued_to_its_own_places_and_a_date_links(
    corpus_index: EntityIndex, question: str, expected: tuple[str, str]
) -> None:
    """Mixed-script questions glue city, district and year to the name: nothing is guessed."""
    assert names(corpus_index, question) == [expected]


@pytest.mark.parametrize(
    "question",
    [
        "南京江宁区Greenland Lixang City2021年1月的均价是多少？",  # misspelt
        "WuhanEast Lake High-tech ZoneWan He Guangu2021年1月的均价是多少？",  # misspelt
        "ShanghaiPudong New AreaWan He Guanggu2021年1月的均价是多少？",  # not its places
    ],
)
def test_a_glued_name_is_still_asked_back_when_misspelt_or_elsewhere(
    corpus_index: EntityIndex, question: str
) -> None:
    with pytest.raises(UnknownEntityError, match="did you mean"):
        corpus_index.link(question)


def test_chinese_names_link(corpus_index: EntityIndex, corpus_entries) -> None:
    entry = next(e for e in corpus_entries if e.name == "Vanke Zuoan")
    linked = corpus_index.link(f"{entry.aliases[0]}下个月的价格是多少?")
    assert [p.name for p in linked.entities] == ["Vanke Zuoan"]
