"""How sure a reasoning score is: bootstrap intervals, and paired comparisons of two runs.

A QA split has about 1,000 reasoning items, so its accuracy has a standard error of about
1.6 points: whether a run meets "accuracy ≥ 60", or whether a change that moved it by
half a point did anything, cannot be read off the point figures. ``bench run`` therefore
stores percentile-bootstrap intervals over the items (``reasoning_ci`` in its JSON), and
``bench compare`` scores two runs of the same items against each other: the difference
with a paired bootstrap interval (both runs resampled with the same items) and McNemar's
exact test on the items only one of them got right.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from foretab.bench.bootstrap import LEVEL, RESAMPLES, percentile_interval, rounded_change
from foretab.bench.qa.metrics import CategoricalOutcome, score_categorical
from foretab.errors import ForetabError


class CompareError(ForetabError):
    """Two detail files cannot be compared."""


def _columns(outcomes: Sequence[CategoricalOutcome]) -> tuple[np.ndarray, ...]:
    """True positives, predicted items, gold items, exactly right: one array each."""
    table = np.array(
        [[o.true_positives, o.predicted, o.gold, int(o.correct)] for o in outcomes], dtype=float
    ).reshape(len(outcomes), 4)
    return tuple(table.T)


def _scores(
    tp: np.ndarray, predicted: np.ndarray, gold: np.ndarray, correct: np.ndarray, axis: int = -1
) -> np.ndarray:
    """``[2, ...]``: accuracy and micro F1 (percent) over ``axis``."""
    matched, listed = tp.sum(axis=axis), predicted.sum(axis=axis) + gold.sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        # Micro F1 = 2 TP / (predicted + gold): the harmonic mean of micro P and R.
        f1 = np.where(listed > 0, 200.0 * matched / listed, 0.0)
    return np.stack([100.0 * correct.mean(axis=axis), f1])


def _change(*columns: np.ndarray, axis: int = -1) -> np.ndarray:
    """``[2, ...]``: run B's accuracy and F1 minus run A's (columns of A, then of B)."""
    return _scores(*columns[4:], axis=axis) - _scores(*columns[:4], axis=axis)


def reasoning_intervals(
    outcomes: Sequence[CategoricalOutcome],
    level: float = LEVEL,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> dict[str, object]:
    """Percentile-bootstrap intervals of accuracy and micro F1 over the reasoning items."""
    if len(outcomes) < 2:
        return {}
    bounds = percentile_interval(_columns(outcomes), _scores, level, resamples, seed)
    (acc_lo, acc_hi), (f1_lo, f1_hi) = bounds.round(2).tolist()
    return {
        "level": level,
        "resamples": resamples,
        "accuracy": [acc_lo, acc_hi],
        "f1": [f1_lo, f1_hi],
    }


@dataclass(frozen=True, slots=True)
class Comparison:
    """Run B against run A on the reasoning items both answered."""

    items: int
    accuracy: tuple[float, float]
    f1: tuple[float, float]
    #: B minus A, with its paired-bootstrap interval ``(difference, low, high)``.
    accuracy_change: tuple[float, float, float]
    f1_change: tuple[float, float, float]
    only_a_right: int
    only_b_right: int
    #: McNemar's exact two-sided p-value on the items exactly one run got right.
    mcnemar_p: float
    level: float

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def compare_outcomes(
    a: Sequence[CategoricalOutcome],
    b: Sequence[CategoricalOutcome],
    level: float = LEVEL,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> Comparison:
    """Compare two runs' outcomes on the same items, in the same order."""
    from scipy.stats import binomtest

    if len(a) != len(b) or len(a) < 2:
        raise CompareError(
            f"need the same items (at least 2) in both runs, got {len(a)} and {len(b)}"
        )
    cols_a, cols_b = _columns(a), _columns(b)
    base, other = _scores(*cols_a), _scores(*cols_b)
    bounds = percentile_interval((*cols_a, *cols_b), _change, level, resamples, seed)
    right_a, right_b = cols_a[3].astype(bool), cols_b[3].astype(bool)
    only_a, only_b = int(np.sum(right_a & ~right_b)), int(np.sum(right_b & ~right_a))
    p_value = binomtest(only_b, only_a + only_b, 0.5).pvalue if only_a + only_b else 1.0
    return Comparison(
        items=len(a),
        accuracy=(round(float(base[0]), 2), round(float(other[0]), 2)),
        f1=(round(float(base[1]), 2), round(float(other[1]), 2)),
        accuracy_change=rounded_change(other[0] - base[0], bounds[0], 2),
        f1_change=rounded_change(other[1] - base[1], bounds[1], 2),
        only_a_right=only_a,
        only_b_right=only_b,
        mcnemar_p=round(float(p_value), 4),
        level=level,
    )


def read_reasoning_details(path: Path) -> dict[str, CategoricalOutcome]:
    """Reasoning outcomes by item id from a ``foretab bench run --details`` file."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise CompareError(
            f"Cannot read {path} ({exc}); pass files written by `foretab bench run --details FILE`."
        ) from exc
    outcomes: dict[str, CategoricalOutcome] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if row.get("task") != "reasoning":
                continue
            outcomes[str(row["id"])] = score_categorical(row["gold"], row.get("predicted"))
        except (ValueError, KeyError, AttributeError) as exc:
            raise CompareError(
                f"{path}, line {number}: not a `foretab bench run --details` row ({exc})."
            ) from exc
    return outcomes


def compare_details(a_path: Path, b_path: Path, **options: float | int) -> Comparison:
    """Compare the reasoning items two ``--details`` files share (matched by item id)."""
    a, b = read_reasoning_details(a_path), read_reasoning_details(b_path)
    shared = [key for key in a if key in b]
    if not shared:
        raise CompareError(
            f"{a_path} and {b_path} share no reasoning items: compare two runs of the same "
            "dataset split (`foretab bench run --dataset SPLIT --details FILE`)."
        )
    return compare_outcomes([a[k] for k in shared], [b[k] for k in shared], **options)  # type: ignore[arg-type]
