"""MSE / MAE / MRE over observed target cells only (ODTQA-FoRe protocol)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class Scores:
    """Errors over the cells where the truth is observed."""

    mse: float
    mae: float
    mre: float
    n_points: int


def cell_errors(
    pred: np.ndarray, truth: np.ndarray, mask: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(scored cells, |error|, |error| / |truth|)``, the errors 0 off the scored cells.

    Scored: the truth is finite (and ``mask``, if given). A missing prediction on a
    scored cell counts as an error of the full value, so a model cannot look good by
    abstaining.
    """
    cells = np.isfinite(truth)
    if mask is not None:
        cells &= mask.astype(bool)
    with np.errstate(invalid="ignore"):
        err = np.where(cells, np.abs(np.where(np.isfinite(pred), pred, 0.0) - truth), 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.where(cells, err / np.abs(truth), 0.0)
    return cells, err, rel


def score(pred: np.ndarray, truth: np.ndarray, mask: np.ndarray | None = None) -> Scores:
    """Score ``pred`` against ``truth`` on the cells ``cell_errors`` scores."""
    cells, err, rel = cell_errors(pred, truth, mask)
    if not cells.any():
        return Scores(float("nan"), float("nan"), float("nan"), 0)
    err = err[cells]
    return Scores(
        mse=float(np.mean(err**2)),
        mae=float(np.mean(err)),
        mre=float(np.mean(rel[cells])),
        n_points=int(cells.sum()),
    )
