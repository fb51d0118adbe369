"""Metric functions on hand-made cases (docs/design.md §5)."""

from __future__ import annotations

import pytest

from foretab.bench.qa.metrics import (
    aggregate_categorical,
    aggregate_numeric,
    categorical_items,
    numeric_items,
    parse_month,
    percentile,
    score_categorical,
    score_numeric,
    score_retrieval,
)


def test_numeric_items_parse_every_answer_format() -> None:
    assert numeric_items([[10.5]]) == {(None, None): 10.5}
    assert numeric_items([["January 2022", 1.0], ["2022-02", "2,000.5"]]) == {
        (None, "2022-01"): 1.0,
        (None, "2022-02"): 2000.5,
    }
    assert numeric_items([["Poly Park", 3.0], ["vanke  city", 4.0]]) == {
        ("poly park", None): 3.0,
        ("vanke city", None): 4.0,
    }
    assert numeric_items([["A", "March 2022", 5.0]]) == {("a", "2022-03"): 5.0}


@pytest.mark.parametrize(
    "bad",
    [
        None,
        [],
        "12",
        [["Increase"]],
        [[1.0, 2.0, 3.0, 4.0]],
        [["A", 1.0], ["a", 2.0]],
        [[float("nan")]],
    ],
)
def test_malformed_numeric_answers_are_rejected(bad: object) -> None:
    assert numeric_items(bad) is None


def test_parse_month() -> None:
    assert parse_month("January 2022") == "2022-01"
    assert parse_month("december 2021") == "2021-12"
    assert parse_month("2022-03") == "2022-03"
    assert parse_month("Poly") is None


def test_mae_mse_mre_over_matched_items() -> None:
    gold = [["A", 100.0], ["B", 200.0]]
    perfect = score_numeric(gold, [["B", 200.0], ["A", 100.0]])  # order does not matter
    off = score_numeric(gold, [["A", 110.0], ["B", 180.0]])
    partial = score_numeric(gold, [["A", 90.0]])  # B missing: matched items only, invalid
    failed = score_numeric(gold, None)
    assert perfect.valid and perfect.exact
    assert off.valid and not off.exact
    assert not partial.valid and partial.pairs == ((100.0, 90.0),)
    score = aggregate_numeric([perfect, off, partial, failed])
    # errors: 0, 0, 10, 20, 10 over five matched items
    assert score.mae == pytest.approx(40 / 5)
    assert score.mse == pytest.approx((100 + 400 + 100) / 5)
    assert score.mre == pytest.approx((0 + 0 + 0.1 + 0.1 + 0.1) / 5)
    assert score.valid_completion_rate == pytest.approx(50.0)
    assert score.exact_rate == pytest.approx(25.0)
    assert score.n == 4


def test_exact_tolerates_one_rounding_step_only() -> None:
    assert score_numeric([[100.0]], [[100.01]]).exact
    assert not score_numeric([[100.0]], [[100.02]]).exact


def test_mre_skips_zero_gold_and_empty_runs_are_none() -> None:
    score = aggregate_numeric([score_numeric([[0.0]], [[5.0]])])
    assert score.mae == 5.0 and score.mre is None
    empty = aggregate_numeric([])
    assert empty.mae is None and empty.valid_completion_rate == 0.0


def test_categorical_items_normalize_case_and_spaces() -> None:
    assert categorical_items([["Increase"]]) == frozenset({"increase"})
    assert categorical_items([["Poly  Park"], ["B"]]) == frozenset({"poly park", "b"})
    assert categorical_items("Increase") is None


def test_micro_precision_recall_f1_and_accuracy() -> None:
    outcomes = [
        score_categorical([["A"], ["C"]], [["A"], ["C"]]),  # tp 2, pred 2, gold 2, right
        score_categorical([["A"], ["C"]], [["A"]]),  # tp 1, pred 1, gold 2
        score_categorical([["B"]], [["A"], ["B"]]),  # tp 1, pred 2, gold 1
        score_categorical([["None"]], [["A"]]),  # tp 0, pred 1, gold 1
        score_categorical([["Increase"]], None),  # engine error: tp 0, pred 0, gold 1
    ]
    score = aggregate_categorical(outcomes)
    assert score.accuracy == pytest.approx(20.0)
    assert score.precision == pytest.approx(100 * 4 / 6)
    assert score.recall == pytest.approx(100 * 4 / 7)
    p, r = 4 / 6, 4 / 7
    assert score.f1 == pytest.approx(100 * 2 * p * r / (p + r))
    assert score.n == 5


def test_order_of_items_does_not_matter_for_accuracy() -> None:
    assert score_categorical([["A"], ["B"]], [["B"], ["A"]]).correct


def test_retrieval_micro_prf() -> None:
    score = score_retrieval(
        [(["t1", "t2"], ["t1", "t2"]), (["t1", "t2"], ["t1", "t3"]), (["t1"], [])]
    )
    assert score.precision == pytest.approx(100 * 3 / 4)
    assert score.recall == pytest.approx(100 * 3 / 5)
    assert score.n == 3


def test_percentile() -> None:
    assert percentile([], 50) is None
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == pytest.approx(2.5)
    assert percentile([5.0], 95) == 5.0
    assert percentile(list(map(float, range(101))), 95) == pytest.approx(95.0)
