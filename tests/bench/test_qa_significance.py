"""Bootstrap intervals of reasoning scores and paired comparisons of two runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from foretab.bench.qa.metrics import CategoricalOutcome
from foretab.bench.qa.significance import (
    CompareError,
    compare_details,
    compare_outcomes,
    reasoning_intervals,
)
from foretab.cli.main import app, register_commands

RIGHT = CategoricalOutcome(1, 1, 1, True)
WRONG = CategoricalOutcome(0, 1, 1, False)
# Two gold items, one of them listed: half right by F1, not exactly right.
HALF = CategoricalOutcome(1, 1, 2, False)


def _run(right: int, wrong: int) -> list[CategoricalOutcome]:
    return [RIGHT] * right + [WRONG] * wrong


def test_interval_of_an_accuracy_has_the_binomial_width() -> None:
    ci = reasoning_intervals(_run(600, 400))
    low, high = ci["accuracy"]
    # 60% of 1,000 items: standard error 1.55 points, so about ±3.0 at 95%.
    assert low < 60.0 < high
    assert 2.5 < 60.0 - low < 3.6 and 2.5 < high - 60.0 < 3.6
    assert ci["level"] == 0.95 and ci["resamples"] == 2_000
    assert reasoning_intervals(_run(600, 400)) == ci  # seeded: the same file twice


def test_f1_interval_is_around_the_micro_f1() -> None:
    outcomes = [HALF] * 300 + _run(200, 100)
    ci = reasoning_intervals(outcomes)
    # Micro F1: 2 TP / (predicted + gold) = 2 * 500 / (600 + 900) = 66.67.
    low, high = ci["f1"]
    assert low < 200.0 * 500 / 1500 < high
    assert ci["accuracy"][0] < 100.0 * 200 / 600 < ci["accuracy"][1]
    assert reasoning_intervals([RIGHT]) == {}  # nothing to resample


def test_compare_finds_a_real_difference() -> None:
    before = _run(500, 500)
    after = _run(600, 400)  # the same first 500 right, 100 more
    result = compare_outcomes(before, after)
    assert result.accuracy == (50.0, 60.0)
    change, low, high = result.accuracy_change
    assert change == 10.0 and 0.0 < low < change < high
    assert (result.only_a_right, result.only_b_right) == (0, 100)
    assert result.mcnemar_p < 1e-20


def test_compare_of_a_run_with_itself_is_no_change() -> None:
    run = _run(55, 45)
    result = compare_outcomes(run, run)
    assert result.accuracy_change == (0.0, 0.0, 0.0) and result.f1_change == (0.0, 0.0, 0.0)
    assert result.mcnemar_p == 1.0


def test_mcnemar_counts_only_the_items_the_runs_disagree_on() -> None:
    # 3 items only A got right, 9 only B: p = 2 * P(X <= 3), X ~ Binomial(12, 1/2).
    before = _run(3, 9) + _run(50, 0) + _run(0, 20)
    after = _run(0, 3) + _run(9, 0) + _run(50, 0) + _run(0, 20)
    result = compare_outcomes(before, after)
    assert (result.only_a_right, result.only_b_right) == (3, 9)
    assert result.mcnemar_p == pytest.approx(2 * (1 + 12 + 66 + 220) / 4096, abs=1e-4)
    # Not sure at 95%: the interval reaches 0 (with so few differing items the bootstrap
    # is a little narrow, which is why the exact test is printed beside it).
    assert result.accuracy_change[1] <= 0.0 < result.accuracy_change[2]


def test_compare_needs_the_same_items() -> None:
    with pytest.raises(CompareError, match="same items"):
        compare_outcomes(_run(3, 0), _run(2, 0))


def _details(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    """A ``--details`` file: (id, gold, predicted) reasoning rows and one forecast row."""
    lines = [
        {"id": key, "task": "reasoning", "gold": [[gold]], "predicted": [[pred]]}
        for key, gold, pred in rows
    ]
    lines.append({"id": "f1", "task": "forecast", "gold": [[1.0]], "predicted": [[2.0]]})
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def test_compare_details_matches_items_by_id(tmp_path: Path) -> None:
    a = _details(tmp_path / "a.jsonl", [("x", "A", "A"), ("y", "B", "A"), ("z", "C", "C")])
    # B answered in another order, got y right and z wrong, and has an item A lacks.
    b = _details(
        tmp_path / "b.jsonl",
        [("w", "A", "A"), ("z", "C", "A"), ("y", "B", "B"), ("x", "A", "A")],
    )
    result = compare_details(a, b)
    assert result.items == 3
    assert result.accuracy == (66.67, 66.67)
    assert (result.only_a_right, result.only_b_right) == (1, 1)


def test_compare_details_errors_name_the_problem(tmp_path: Path) -> None:
    a = _details(tmp_path / "a.jsonl", [("x", "A", "A"), ("y", "B", "B")])
    other = _details(tmp_path / "b.jsonl", [("p", "A", "A"), ("q", "B", "B")])
    with pytest.raises(CompareError, match="share no reasoning items"):
        compare_details(a, other)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "x", "task": "reasoning", "gold": [["A"]]}\n{oops\n')
    with pytest.raises(CompareError, match="line 2"):
        compare_details(a, broken)
    with pytest.raises(CompareError, match="--details"):
        compare_details(a, tmp_path / "missing.jsonl")


def test_cli_compare_prints_and_writes_the_comparison(tmp_path: Path) -> None:
    register_commands()
    rows = [(str(k), "A", "A") for k in range(40)]
    a = _details(tmp_path / "a.jsonl", rows)
    b = _details(tmp_path / "b.jsonl", rows[:30] + [(str(k), "A", "B") for k in range(30, 40)])
    out = tmp_path / "cmp.json"
    result = CliRunner().invoke(
        app, ["bench", "compare", str(a), str(b), "--json", str(out)], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    assert "40 reasoning items in both runs" in result.output
    assert "-25.00" in result.output and "McNemar exact p" in result.output
    saved = json.loads(out.read_text())
    assert saved["accuracy"] == [100.0, 75.0] and saved["only_a_right"] == 10
    missing = CliRunner().invoke(app, ["bench", "compare", str(a), str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "--details" in missing.output
