"""How well a store's saved model calls the direction of next year's prices.

Usage: PYTHONPATH=src python scripts/direction_diagnostics.py --db runs/ref2020.duckdb

Reasoning questions hinge on whether a project's future price lies above its current one
and on which of two projects of a district changes more; this scores exactly that on the
store's own future year (the projects ``foretab bench corpus`` scores), from the point
forecasts (the medians the most-probable decision reads for one month):

* sign: share of observed future months whose forecast is on the right side of the
  current price (exact ties left out), overall and per horizon;
* window sign: the same for the mean of the observed months of R+1..R+6 and R+7..R+12;
* pairs: share of pairs of one district's projects in one month ranked right by change;
* 80% coverage by months since the last observation (the spread's staleness term);
* the median log error per horizon (actual / forecast), and the share forecast up.

Run it on the 2020-12 store (future 2021) to select; the 2021-12 store's future is the
QA test period (docs/benchmarks/selection.md).
"""

from __future__ import annotations

import argparse
from collections import defaultdict

import numpy as np

from foretab.bench.forecast.corpus import stored_year
from foretab.core.plan import EntityRef
from foretab.forecast.base import MAX_HORIZON, last_observed

AGE_GROUPS = ((0, 1), (1, 2), (2, 4), (4, 8), (8, 99))


def main() -> None:
    """Print the direction figures of ``--db``'s saved model on its future year."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    db = parser.parse_args().db
    year = stored_year(db)
    model, refs, window, truth = year.model, year.refs, year.window, year.truth
    ref = model.reference_month
    pred = year.forecast()
    bounds = model.predict_quantiles(window, MAX_HORIZON, (0.1, 0.9), refs)
    level, age = last_observed(window)
    with np.errstate(invalid="ignore", divide="ignore"):
        actual = np.log(truth / level[:, None])
        forecast = np.log(pred / level[:, None])
    seen = np.isfinite(actual) & (actual != 0)
    right = np.sign(actual) == np.sign(forecast)
    print(f"{db}: {len(refs)} projects, R = {ref.iso}, drift {model.location_drift:+.5f}/month")
    print(f"sign {right[seen].mean():.4f}; forecast up {np.mean(forecast[seen] > 0):.3f}, ", end="")
    print(f"actually up {np.mean(actual[seen] > 0):.3f}")
    print("sign by horizon " + " ".join(f"{right[:, k][seen[:, k]].mean():.3f}" for k in range(12)))
    for a, b in ((0, 6), (6, 12)):
        months = np.isfinite(truth[:, a:b])
        count = months.sum(axis=1)
        ok = count > 0
        true_mean = np.where(months, truth[:, a:b], 0.0).sum(axis=1) / np.maximum(count, 1)
        pred_mean = np.where(months, pred[:, a:b], 0.0).sum(axis=1) / np.maximum(count, 1)
        ok &= true_mean != level
        agree = np.sign(true_mean - level) == np.sign(pred_mean - level)
        print(f"window R+{a + 1}..R+{b} mean sign {agree[ok].mean():.4f}")
    print(f"pairs within a district {_pair_accuracy(refs, actual, forecast):.4f}")
    inside = (truth >= bounds[..., 0]) & (truth <= bounds[..., 1])
    observed = np.isfinite(truth)
    parts = []
    for lo, hi in AGE_GROUPS:
        cells = ((age >= lo) & (age < hi))[:, None] & observed
        parts.append(f"[{lo},{hi}) {inside[cells].mean():.3f} ({int(cells.sum())})")
    print(f"80% coverage {inside[observed].mean():.3f}; by months since last observation:")
    print("  " + "  ".join(parts))
    error = actual - forecast
    print(
        "median log error by horizon "
        + " ".join(f"{np.nanmedian(error[:, k]):+.4f}" for k in range(12))
    )


def _pair_accuracy(refs: list[EntityRef], actual: np.ndarray, forecast: np.ndarray) -> float:
    """Share of same-district, same-month pairs whose change the forecasts order right."""
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, r in enumerate(refs):
        groups[(r.outer, r.inner)].append(i)
    agree = total = 0
    for rows in groups.values():
        if len(rows) < 2:
            continue
        for k in range(MAX_HORIZON):
            a, f = actual[rows, k], forecast[rows, k]
            ok = np.isfinite(a)
            a, f = a[ok], f[ok]
            da, df = a[:, None] - a[None, :], f[:, None] - f[None, :]
            pairs = np.triu(np.ones(da.shape, dtype=bool), 1) & (da != 0)
            agree += int((np.sign(da) == np.sign(df))[pairs].sum())
            total += int(pairs.sum())
    return agree / total if total else float("nan")


if __name__ == "__main__":
    main()
