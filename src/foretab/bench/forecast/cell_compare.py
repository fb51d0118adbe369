"""Two forecasting or imputation runs compared cell by cell, resampled by series.

``bench forecast`` / ``bench impute --details FILE`` write one JSON line per scored cell
(model, series, month, true and predicted value). ``bench compare`` on two such files
(or on two models of one file) takes the cells both scored and reports B's MAE and MRE
minus A's with a 95% paired-bootstrap interval that resamples whole series: whether a
change of a few yuan/m² is more than the draw of series in the split.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from foretab.bench.bootstrap import LEVEL, error_means, percentile_interval, rounded_change
from foretab.errors import ForetabError
from foretab.forecast.metrics import cell_errors

#: (series, month) of a scored cell
CellKey = tuple[str, str]


class CellCompareError(ForetabError):
    """Two cell-detail files cannot be compared."""


def cell_rows(
    model: str,
    series_id: Sequence[str],
    months: Sequence[str],
    pred: np.ndarray,
    truth: np.ndarray,
    mask: np.ndarray | None = None,
) -> Iterator[dict[str, object]]:
    """The ``--details`` rows of the cells ``foretab.forecast.metrics.score`` scores."""
    cells = np.isfinite(truth)
    if mask is not None:
        cells &= mask.astype(bool)
    for row, col in zip(*np.nonzero(cells), strict=True):
        value = pred[row, col]
        yield {
            "model": model,
            "series_id": series_id[row],
            "month": months[col],
            "truth": float(truth[row, col]),
            # A missing prediction is scored as 0 (an error of the full value); kept null.
            "predicted": float(value) if np.isfinite(value) else None,
        }


def write_cell_details(path: Path, rows: Iterator[dict[str, object]]) -> None:
    """Write ``rows`` as JSON Lines (the folder is made if needed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")


def is_cell_details(path: Path) -> bool:
    """Whether ``path``'s first row is a cell row (not a QA ``bench run`` row)."""
    try:
        with Path(path).open(encoding="utf-8") as handle:
            first = handle.readline()
        return "truth" in json.loads(first)
    except (OSError, ValueError, TypeError):
        return False


def read_cells(path: Path, model: str | None) -> dict[CellKey, tuple[float, float | None]]:
    """``(truth, predicted)`` by cell for ``model`` (may be omitted if the file has one)."""
    by_model: dict[str, dict[CellKey, tuple[float, float | None]]] = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise CellCompareError(
            f"Cannot read {path} ({exc}); pass files written by "
            "`foretab bench forecast|impute --details FILE`."
        ) from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            key = (str(row["series_id"]), str(row["month"]))
            cells = by_model.setdefault(str(row["model"]), {})
            cells[key] = (float(row["truth"]), row["predicted"])
        except (ValueError, KeyError, TypeError) as exc:
            raise CellCompareError(
                f"{path}, line {number}: not a `bench forecast|impute --details` row ({exc})."
            ) from exc
    if model is None and len(by_model) == 1:
        return next(iter(by_model.values()))
    if model is None or model not in by_model:
        raise CellCompareError(
            f"{path} has the models {', '.join(sorted(by_model)) or 'none'}: name one "
            "with --model-a / --model-b."
        )
    return by_model[model]


@dataclass(frozen=True, slots=True)
class CellComparison:
    """Run B against run A on the cells both scored."""

    series: int
    cells: int
    mae: tuple[float, float]
    mre: tuple[float, float]
    #: B minus A with its series-bootstrap interval ``(difference, low, high)``
    mae_change: tuple[float, float, float]
    mre_change: tuple[float, float, float]
    #: cells whose absolute error B made smaller / larger
    better: int
    worse: int
    level: float

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _change(
    abs_a: np.ndarray,
    rel_a: np.ndarray,
    abs_b: np.ndarray,
    rel_b: np.ndarray,
    cells: np.ndarray,
    axis: int = -1,
) -> np.ndarray:
    """``[2, ...]``: B's MAE and MRE minus A's, from per-series sums."""
    return error_means(abs_b, rel_b, cells, axis) - error_means(abs_a, rel_a, cells, axis)


def compare_cell_files(
    a_path: Path,
    b_path: Path,
    model_a: str | None = None,
    model_b: str | None = None,
    level: float = LEVEL,
) -> CellComparison:
    """Compare the cells two ``--details`` files (or two models of one) both scored."""
    a, b = read_cells(a_path, model_a), read_cells(b_path, model_b)
    keys = [key for key in a if key in b and a[key][0] == b[key][0]]
    if len(keys) < 2:
        raise CellCompareError(
            f"{a_path} and {b_path} share {len(keys)} scored cells with the same true "
            "value: compare two runs on the same test file or split."
        )
    truth = np.array([a[k][0] for k in keys])
    preds = [
        np.array([np.nan if run[k][1] is None else run[k][1] for k in keys], dtype=float)
        for run in (a, b)
    ]
    (_, err_a, rel_a), (_, err_b, rel_b) = (cell_errors(pred, truth) for pred in preds)
    series, index = np.unique([k[0] for k in keys], return_inverse=True)
    count = np.bincount(index).astype(float)

    def per_series(values: np.ndarray) -> np.ndarray:
        return np.bincount(index, weights=values)

    columns = (per_series(err_a), per_series(rel_a), per_series(err_b), per_series(rel_b), count)
    bounds = percentile_interval(columns, _change, level)
    change = _change(*columns)
    return CellComparison(
        series=len(series),
        cells=len(keys),
        mae=(round(float(err_a.mean()), 2), round(float(err_b.mean()), 2)),
        mre=(round(float(rel_a.mean()), 5), round(float(rel_b.mean()), 5)),
        mae_change=rounded_change(change[0], bounds[0], 2),
        mre_change=rounded_change(change[1], bounds[1], 5),
        better=int(np.sum(err_b < err_a)),
        worse=int(np.sum(err_b > err_a)),
        level=level,
    )
