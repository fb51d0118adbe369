"""Fit the probability calibration of a store on a QA split's answers (``bench calibrate``).

Input: a ``foretab bench run --details`` file of the split (QA *train*: the maps are
chosen on val and reported once on test, docs/calibration.md). Each answer with a stated
probability gives (its scenario share, whether it was right); per kind, a monotone map
from the first to the chance of the second:

* ``isotonic`` — the pool-adjacent-violators fit (scikit-learn), interpolated linearly
  between its steps;
* ``platt`` — a logistic regression on the logit of the share (two numbers a kind), kept
  as its curve on a 101-point grid so that both are saved and applied alike.

Both are saved as breakpoints (``foretab.analyze.calibration.Curve``), never as a
fitted estimator object.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from foretab.analyze.calibration import ARTIFACT_NAME as CALIBRATION_ARTIFACT
from foretab.analyze.calibration import (
    Curve,
    ProbabilityCalibration,
    ProbabilityKind,
    describe,
    model_digest,
)
from foretab.bench.qa.reliability import Stated
from foretab.errors import ForetabError
from foretab.extras import require

METHODS = ("isotonic", "platt")
#: A kind with fewer training answers keeps its scenario shares (a map on fewer would be
#: noise: at 100 answers a bin's share right is ±5 points sure at best).
MIN_ANSWERS = 100
_EDGE = 1e-4


def fit_curves(
    stated: Sequence[Stated], method: str = "isotonic", min_answers: int = MIN_ANSWERS
) -> dict[ProbabilityKind, Curve]:
    """One curve per kind with at least ``min_answers`` answers."""
    if method not in METHODS:
        raise ForetabError(
            f"unknown calibration method {method!r}; use one of {', '.join(METHODS)}"
        )
    require("sklearn", "bench")
    grouped: dict[ProbabilityKind, list[Stated]] = defaultdict(list)
    for s in stated:
        try:
            grouped[ProbabilityKind(s.kind)].append(s)
        except ValueError:
            continue  # a kind this version does not state
    curves = {}
    for kind, group in sorted(grouped.items()):
        if len(group) < min_answers:
            continue
        share = np.array([s.scenario_share for s in group], dtype=float)
        right = np.array([s.correct for s in group], dtype=float)
        fit = _isotonic if method == "isotonic" else _platt
        x, y = fit(share, right)
        curves[kind] = Curve(tuple(map(float, x)), tuple(map(float, y)), method, len(group))
    return curves


def _isotonic(share: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.isotonic import IsotonicRegression

    model = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
    model.fit(share, right)
    x, y = np.asarray(model.X_thresholds_), np.asarray(model.y_thresholds_)
    # Flat beyond the fitted range, as ``out_of_bounds="clip"`` predicts.
    if x[0] > 0.0:
        x, y = np.r_[0.0, x], np.r_[y[0], y]
    if x[-1] < 1.0:
        x, y = np.r_[x, 1.0], np.r_[y, y[-1]]
    return x, y


def _platt(share: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.linear_model import LogisticRegression

    def logit(p: np.ndarray) -> np.ndarray:
        p = np.clip(p, _EDGE, 1 - _EDGE)
        return np.log(p / (1 - p))[:, None]

    model = LogisticRegression(C=1e6)
    if np.unique(right).size < 2:  # all right or all wrong: the map is that constant
        grid = np.linspace(0.0, 1.0, 2)
        return grid, np.full(2, right[0])
    model.fit(logit(share), right.astype(int))
    grid = np.linspace(0.0, 1.0, 101)
    y = model.predict_proba(logit(grid))[:, 1]
    return grid, np.maximum.accumulate(y)  # a negative slope is not a calibration


def calibrate_store(
    db: str,
    stated: Sequence[Stated],
    method: str = "isotonic",
    min_answers: int = MIN_ANSWERS,
    fitted_on: str = "",
) -> ProbabilityCalibration:
    """Fit the curves and save them with the store at ``db``, tied to its current model."""
    from foretab.forecast.store import ARTIFACT_NAME as MODEL_ARTIFACT
    from foretab.store import open_history

    curves = fit_curves(stated, method, min_answers)
    with open_history(db) as store:
        model = store.load_artifact(MODEL_ARTIFACT)
        if model is None:
            raise ForetabError(
                "the store has no model, so its answers state no probabilities to calibrate",
                suggestions=("run `foretab train --db DB` first",),
            )
        calibration = ProbabilityCalibration(
            curves, model_digest(model), fitted_on, describe(curves)
        )
        store.save_artifact(CALIBRATION_ARTIFACT, calibration.to_json())
    return calibration
