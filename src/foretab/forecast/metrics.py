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


def score(pred: np.ndarray, truth: np.ndarray, mask: np.ndarray | None = None) -> Scores:
    """Score ``pred`` against ``truth`` where truth is finite (and ``mask``, if given).

    A missing prediction on a scored cell counts as an error of the full value, so a
    model cannot look good by abstaining.
    """
    cells = np.isfinite(truth)
    if mask is not None:
        cells &= mask.astype(bool)
    y = truth[cells]
    p = np.where(np.isfinite(pred[cells]), pred[cells], 0.0)
    if y.size == 0:
        return Scores(float("nan"), float("nan"), float("nan"), 0)
    err = p - y
    return Scores(
        mse=float(np.mean(err**2)),
        mae=float(np.mean(np.abs(err))),
        mre=float(np.mean(np.abs(err) / np.abs(y))),
        n_points=int(y.size),
    )
