"""ODTQA-FoRe metrics (paper §5.1, docs/design.md §5) as small pure functions.

* Forecasting: numeric answer items are matched by (project, month); MSE, MAE and
  MRE = mean(|ŷ−y|/|y|) are taken over the matched items of all questions (gold zeros are
  left out of MRE). The Valid Completion Rate is the share of questions whose answer is
  well formed and covers every gold item; an engine error is an invalid completion.
* Reasoning: every answer row is one item; Accuracy counts questions whose item set equals
  the gold set; Precision / Recall / F1 are micro averages over items of all questions.
* Retrieval: retrieved vs golden tables, micro-averaged over questions.

Percentages are on a 0–100 scale.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from foretab.core.months import MONTH_NAMES, Month

NumericKey = tuple[str | None, str | None]  # (project, month ISO)
EXACT_TOLERANCE = 0.011  # answers are printed with 2 decimals; allow one rounding step

_LABEL = re.compile(r"^\s*(" + "|".join(MONTH_NAMES) + r")\s+(\d{4})\s*$", re.IGNORECASE)
_NUMBER = re.compile(r"^\s*[-+]?[\d,]*\.?\d+(?:[eE][-+]?\d+)?\s*$")


def normalize_name(text: str) -> str:
    """Case- and space-insensitive form of a project name or label."""
    return " ".join(str(text).split()).casefold()


def parse_month(value: object) -> str | None:
    """``"January 2022"`` or ``"2022-01"`` → ``"2022-01"``; anything else → None."""
    text = str(value).strip()
    match = _LABEL.match(text)
    if match:
        names = [m.lower() for m in MONTH_NAMES]
        return Month(int(match.group(2)), names.index(match.group(1).lower()) + 1).iso
    try:
        return Month.parse(text).iso
    except ValueError:
        return None


def as_number(value: object) -> float | None:
    """A finite float from a number or a numeric string (commas allowed), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str) and _NUMBER.match(value):
        number = float(value.replace(",", ""))
    else:
        return None
    return number if math.isfinite(number) else None


def numeric_items(answer: object) -> dict[NumericKey, float] | None:
    """Numeric answer rows keyed by (project, month); None when the answer is malformed.

    Accepted rows: ``[v]``, ``["January 2022", v]``, ``["Project", v]`` and
    ``["Project", "January 2022", v]`` (docs/design.md §4).
    """
    if not isinstance(answer, list | tuple) or not answer:
        return None
    items: dict[NumericKey, float] = {}
    for row in answer:
        if not isinstance(row, list | tuple) or not 1 <= len(row) <= 3:
            return None
        value = as_number(row[-1])
        if value is None:
            return None
        labels = row[:-1]
        if any(not isinstance(label, str) for label in labels):
            return None
        project: str | None = None
        month: str | None = None
        if len(labels) == 2:
            project, month = normalize_name(labels[0]), parse_month(labels[1])
            if month is None:
                return None
        elif len(labels) == 1:
            month = parse_month(labels[0])
            if month is None:
                project = normalize_name(labels[0])
        key = (project, month)
        if key in items:
            return None
        items[key] = value
    return items


@dataclass(frozen=True, slots=True)
class NumericOutcome:
    """One numeric question: matched (gold, predicted) pairs and whether it is complete."""

    pairs: tuple[tuple[float, float], ...]
    valid: bool  # well formed and covers every gold item
    exact: bool  # valid and every value within EXACT_TOLERANCE

    @property
    def abs_error(self) -> float | None:
        """Mean absolute error of this question's matched items."""
        if not self.pairs:
            return None
        return sum(abs(p - g) for g, p in self.pairs) / len(self.pairs)


def score_numeric(gold: object, predicted: object) -> NumericOutcome:
    """Match a predicted numeric answer against the gold one."""
    gold_items = numeric_items(gold)
    if gold_items is None:
        raise ValueError(f"gold answer {gold!r} is not a numeric answer")
    pred_items = numeric_items(predicted) if predicted is not None else None
    if pred_items is None:
        return NumericOutcome((), False, False)
    pairs = tuple((g, pred_items[k]) for k, g in gold_items.items() if k in pred_items)
    valid = len(pairs) == len(gold_items)
    exact = valid and all(abs(p - g) <= EXACT_TOLERANCE for g, p in pairs)
    return NumericOutcome(pairs, valid, exact)


@dataclass(frozen=True, slots=True)
class NumericScore:
    """Forecasting (or history) metrics over many questions."""

    mse: float | None
    mae: float | None
    mre: float | None
    valid_completion_rate: float
    exact_rate: float
    n: int

    def to_dict(self) -> dict[str, float | int | None]:
        return {
            "mse": self.mse,
            "mae": self.mae,
            "mre": self.mre,
            "valid_completion_rate": self.valid_completion_rate,
            "exact_rate": self.exact_rate,
            "n": self.n,
        }


def aggregate_numeric(outcomes: Sequence[NumericOutcome]) -> NumericScore:
    """MSE / MAE / MRE over all matched items, VCR and exact rate over questions."""
    pairs = [pair for outcome in outcomes for pair in outcome.pairs]
    n = len(outcomes)
    if pairs:
        mse = sum((p - g) ** 2 for g, p in pairs) / len(pairs)
        mae = sum(abs(p - g) for g, p in pairs) / len(pairs)
        rel = [abs(p - g) / abs(g) for g, p in pairs if g != 0]
        mre = sum(rel) / len(rel) if rel else None
    else:
        mse = mae = mre = None
    vcr = 100.0 * sum(o.valid for o in outcomes) / n if n else 0.0
    exact = 100.0 * sum(o.exact for o in outcomes) / n if n else 0.0
    return NumericScore(mse, mae, mre, vcr, exact, n)


def categorical_items(answer: object) -> frozenset[str] | None:
    """Reasoning answer rows as a set of normalized items; None when malformed."""
    if not isinstance(answer, list | tuple):
        return None
    items: set[str] = set()
    for row in answer:
        if not isinstance(row, list | tuple) or not row:
            return None
        items.add(" | ".join(normalize_name(str(v)) for v in row))
    return frozenset(items)


@dataclass(frozen=True, slots=True)
class CategoricalOutcome:
    """One reasoning question: item counts and exact match."""

    true_positives: int
    predicted: int
    gold: int
    correct: bool


def score_categorical(gold: object, predicted: object) -> CategoricalOutcome:
    """Compare a predicted reasoning answer with the gold one, item by item."""
    gold_items = categorical_items(gold)
    if not gold_items:
        raise ValueError(f"gold answer {gold!r} is not a reasoning answer")
    pred_items = categorical_items(predicted) if predicted is not None else None
    if pred_items is None:
        return CategoricalOutcome(0, 0, len(gold_items), False)
    tp = len(gold_items & pred_items)
    return CategoricalOutcome(tp, len(pred_items), len(gold_items), pred_items == gold_items)


@dataclass(frozen=True, slots=True)
class CategoricalScore:
    """Reasoning metrics (percent)."""

    accuracy: float
    precision: float
    recall: float
    f1: float
    n: int

    def to_dict(self) -> dict[str, float | int]:
        return {
            "accuracy": self.accuracy,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "n": self.n,
        }


def _prf(tp: int, predicted: int, gold: int) -> tuple[float, float, float]:
    precision = 100.0 * tp / predicted if predicted else 0.0
    recall = 100.0 * tp / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def aggregate_categorical(outcomes: Sequence[CategoricalOutcome]) -> CategoricalScore:
    """Accuracy over questions, micro P/R/F1 over items."""
    n = len(outcomes)
    precision, recall, f1 = _prf(
        sum(o.true_positives for o in outcomes),
        sum(o.predicted for o in outcomes),
        sum(o.gold for o in outcomes),
    )
    accuracy = 100.0 * sum(o.correct for o in outcomes) / n if n else 0.0
    return CategoricalScore(accuracy, precision, recall, f1, n)


@dataclass(frozen=True, slots=True)
class RetrievalScore:
    """Table retrieval, micro-averaged (percent)."""

    precision: float
    recall: float
    f1: float
    n: int

    def to_dict(self) -> dict[str, float | int]:
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1, "n": self.n}


def score_retrieval(pairs: Iterable[tuple[Sequence[str], Sequence[str]]]) -> RetrievalScore:
    """``pairs`` of (golden tables, retrieved tables), one per question."""
    tp = predicted = gold = n = 0
    for golden, retrieved in pairs:
        golden_set, retrieved_set = set(golden), set(retrieved)
        tp += len(golden_set & retrieved_set)
        predicted += len(retrieved_set)
        gold += len(golden_set)
        n += 1
    precision, recall, f1 = _prf(tp, predicted, gold)
    return RetrievalScore(precision, recall, f1, n)


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (``q`` in 0..100); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    low = math.floor(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)
