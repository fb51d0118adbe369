"""Reliability figures per kind, the paired Brier comparison and the fitted maps (issue 30)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from foretab.analyze.calibration import ProbabilityKind
from foretab.bench.qa.fit_calibration import fit_curves
from foretab.bench.qa.reliability import (
    DetailsError,
    Stated,
    by_kind,
    compare_brier,
    ece,
    read_stated,
    reliability,
    spiegelhalter_z,
)


def test_spiegelhalter_z_by_hand() -> None:
    p = np.array([0.8, 0.8, 0.3])
    y = np.array([1.0, 0.0, 0.0])
    # Σ (y − p)(1 − 2p) = 0.2·(−0.6) + (−0.8)(−0.6) + (−0.3)(0.4) = 0.24
    # Σ (1 − 2p)² p (1 − p) = 2·0.36·0.16 + 0.16·0.21 = 0.1488
    assert spiegelhalter_z(p, y) == pytest.approx(0.24 / math.sqrt(0.1488))


def test_exact_probabilities_pass_and_overstated_ones_fail() -> None:
    rng = np.random.default_rng(0)
    p = rng.uniform(0.3, 0.9, 5_000)
    exact = rng.uniform(size=p.size) < p
    overstated = rng.uniform(size=p.size) < p - 0.06
    assert abs(spiegelhalter_z(p, exact.astype(float))) < 1.96
    assert abs(spiegelhalter_z(p, overstated.astype(float))) > 1.96
    fair = reliability(p.tolist(), exact.tolist())
    assert abs(fair.mean_stated - fair.share_right) < 0.02
    assert fair.brier == pytest.approx(float(np.mean((p - exact) ** 2)))


def test_ece_by_hand() -> None:
    p = np.array([0.15, 0.15, 0.85, 0.85])
    y = np.array([0.0, 0.0, 1.0, 0.0])
    # bin 1: |0.15 − 0| · 2, bin 8: |0.85 − 0.5| · 2, over 4 answers
    assert ece(p, y) == pytest.approx((0.3 + 0.7) / 4)


def test_figures_per_kind_and_over_all() -> None:
    rows = [("reasoning", 0.8, True), ("reasoning", 0.6, False), ("scope", 0.2, False)]
    table = by_kind(rows)
    assert set(table) == {"all", "reasoning", "scope"}
    assert table["reasoning"]["n"] == 2 and table["all"]["n"] == 3
    assert table["reasoning"]["mean_stated"] == pytest.approx(0.7)
    assert table["reasoning"]["share_right"] == pytest.approx(0.5)


def _stated(ids: range, p: float, right: bool, kind: str = "reasoning") -> list[Stated]:
    return [Stated(f"q{i}", kind, p, p, right) for i in ids]


def test_paired_brier_change_and_its_interval() -> None:
    # The same 200 answers, half right: stating 0.9 scores 0.41, stating 0.5 scores 0.25.
    a = _stated(range(100), 0.9, True) + _stated(range(100, 200), 0.9, False)
    b = _stated(range(100), 0.5, True) + _stated(range(100, 200), 0.5, False)
    (row,) = [r for r in compare_brier(a, b, resamples=500) if r.kind == "reasoning"]
    assert row.items == 200 and row.brier == (0.41, 0.25)
    change, low, high = row.change
    assert change == pytest.approx(-0.16) and low <= change <= high < 0


def test_details_rows_are_read_and_bad_ones_named(tmp_path: Path) -> None:
    path = tmp_path / "details.jsonl"
    rows = [
        {"id": "a", "probability": 0.4, "scenario_share": 0.5, "probability_kind": "scope",
         "correct": True},
        {"id": "b", "probability": None, "correct": False},
        {"id": "c", "probability": 0.7, "correct": False},  # an older file: no share, no kind
    ]  # fmt: skip
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    got = read_stated(path)
    assert [(s.id, s.kind, s.scenario_share) for s in got] == [
        ("a", "scope", 0.5),
        ("c", "reasoning", 0.7),
    ]
    path.write_text('{"id": "a", "probability": 0.3}\n', encoding="utf-8")
    with pytest.raises(DetailsError, match="line 1"):
        read_stated(path)


@pytest.mark.parametrize("method", ["isotonic", "platt"])
def test_a_fitted_map_pulls_overstated_shares_down(method: str) -> None:
    rng = np.random.default_rng(1)
    share = rng.uniform(0.2, 1.0, 3_000)
    right = rng.uniform(size=share.size) < 0.8 * share  # right 80% as often as stated
    stated = [
        Stated(str(i), "reasoning", p, p, bool(r))
        for i, (p, r) in enumerate(zip(share, right, strict=False))
    ]
    stated += _stated(range(10), 0.5, True, kind="scope")  # too few: no map
    curves = fit_curves(stated, method)
    assert set(curves) == {ProbabilityKind.REASONING}
    curve = curves[ProbabilityKind.REASONING]
    assert curve.n == 3_000 and curve.method == method
    assert all(b >= a for a, b in zip(curve.y, curve.y[1:], strict=False))
    assert float(curve(0.9)) == pytest.approx(0.72, abs=0.06)
    mapped = curve(share)
    assert abs(spiegelhalter_z(mapped, right.astype(float))) < 1.96
    assert abs(spiegelhalter_z(share, right.astype(float))) > 1.96


def test_an_unknown_method_is_refused() -> None:
    with pytest.raises(Exception, match="isotonic, platt"):
        fit_curves([], "magic")
