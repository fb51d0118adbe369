"""The RETQA scoring rule (docs/design.md §5): names as a set, numbers as a multiset."""

from __future__ import annotations

from foretab.bench.qa.retqa import RetqaItem, by_intent, same, score
from foretab.errors import QuestionError


def test_names_are_a_set_and_numbers_a_multiset() -> None:
    assert same([["A"], ["B"]], [["B"], ["A"]])
    assert not same([["A"]], [["A"], ["B"]])
    assert same([[1.004], [2.0]], [[2], [1.0]])
    assert not same([[1.0], [1.0]], [[1.0]])


def test_month_labels_and_row_labels_are_not_compared() -> None:
    assert same(
        [["January 2022", 5.0], ["February 2022", 7.0]], [["2022年02月", 7], ["2022年01月", 5]]
    )
    assert same([["A", 3.5], ["B", 4.5]], [[4.5], [3.5]])


def test_a_project_matches_by_either_name() -> None:
    alias = {"Greenland Lixiang City": "绿地理想城"}.get
    assert same([["Greenland Lixiang City"]], [["绿地理想城"]], lambda n: alias(n) or n)


def test_a_refusal_is_wrong_and_intents_are_counted() -> None:
    items = [
        RetqaItem(id="1", question="q1", intent="a", gold=[["X"]]),
        RetqaItem(id="2", question="q2", intent="b", gold=[[1.0]]),
    ]

    def ask(question: str) -> list[list[str | float]]:
        if question == "q2":
            raise QuestionError("no")
        return [["X"]]

    results = score(items, ask)
    assert [r.right for r in results] == [True, False]
    assert by_intent(results) == {"a": (1, 1), "b": (0, 1), "all": (1, 2)}
