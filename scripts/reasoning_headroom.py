"""How much reasoning accuracy knowing part of the future would buy (an oracle bound).

Usage: PYTHONPATH=src python scripts/reasoning_headroom.py --db runs/corpus.duckdb \
    --dataset runs/qa/train_r.jsonl [--oracle none,corpus,district,project]

This is a diagnostic, never a result: every oracle but ``none`` moves the store model's
forecasts by what the future store says they missed, so it reads the future on purpose.
It answers "where is the missing accuracy?": each oracle corrects one layer of the error
and the benchmark's reasoning items are scored again with the same engine.

* ``none``: the stored model as it is (what ``foretab bench run`` scores);
* ``corpus``: every forecast moved by the corpus-wide median log error of its horizon —
  a forecaster that knew the whole market's move over the year;
* ``district``: moved by its district's median log error per horizon, measured on the
  district's *other* projects (projects the dataset asks about are left out, so no item
  reads its own outcome) — a forecaster that knew each district's move;
* ``project``: moved by the project's own median log error over the year — a forecaster
  that knew each project's level but none of its month-to-month noise.

The corpus and district oracles fall back to the corpus's shift where a district has fewer
than ``MIN_GROUP`` other projects with an observation at that horizon.
"""

from __future__ import annotations

import argparse
import warnings
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from foretab.bench.forecast.corpus import stored_year
from foretab.bench.qa.evaluate import run_benchmark
from foretab.core.plan import EntityRef
from foretab.dataset.items import read_items
from foretab.engine import build_engine
from foretab.forecast.base import MAX_HORIZON
from foretab.forecast.source import ModelSource
from foretab.forecast.store import StoreModel

ORACLES = ("none", "corpus", "district", "project")
MIN_GROUP = 5


class ShiftedModel:
    """A store model whose forecasts are multiplied by ``exp(shift)`` per project, horizon.

    Projects without a shift of their own take ``default`` (the corpus's).
    """

    def __init__(
        self, model: StoreModel, shifts: dict[EntityRef, np.ndarray], default: np.ndarray
    ) -> None:
        self.inner = model
        self.model = model.model
        self.lookback = model.lookback
        self.reads_places = model.reads_places
        self.interval_method = model.interval_method
        self.location_drift = model.location_drift
        self.shifts = shifts
        self.default = default

    def _factor(self, refs: Sequence[EntityRef] | None, n: int, h: int) -> np.ndarray:
        rows = [self.shifts.get(r, self.default) for r in refs] if refs else [self.default] * n
        return np.exp(np.array(rows)[:, :h])

    def predict(
        self, history: np.ndarray, h: int = MAX_HORIZON, refs: Sequence[EntityRef] | None = None
    ) -> np.ndarray:
        return self.inner.predict(history, h, refs) * self._factor(refs, len(history), h)

    def predict_quantiles(
        self,
        history: np.ndarray,
        h: int,
        quantiles: tuple[float, ...],
        refs: Sequence[EntityRef] | None = None,
    ) -> np.ndarray:
        out = self.inner.predict_quantiles(history, h, quantiles, refs)
        return out * self._factor(refs, len(history), h)[:, :, None]


def realised_errors(db: str) -> tuple[StoreModel, list[EntityRef], np.ndarray]:
    """The stored model, the eligible projects and ``log(actual / forecast)`` ``[n, 12]``."""
    year = stored_year(db)
    with np.errstate(invalid="ignore", divide="ignore"):
        return year.model, year.refs, np.log(year.truth / year.forecast())


def _median_by_horizon(errors: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """Per horizon, the median of at least ``MIN_GROUP`` observed errors, else ``fallback``."""
    count = np.isfinite(errors).sum(axis=0)
    with warnings.catch_warnings():  # an all-NaN horizon is replaced just below
        warnings.simplefilter("ignore", RuntimeWarning)
        median = np.nanmedian(errors, axis=0)
    return np.where(count >= MIN_GROUP, median, fallback)


def oracle_shifts(
    oracle: str, refs: list[EntityRef], errors: np.ndarray, asked: set[EntityRef]
) -> tuple[dict[EntityRef, np.ndarray], np.ndarray]:
    """``(per-project shifts, default shift)`` of ``oracle`` (``ORACLES``)."""
    others = np.array([r not in asked for r in refs])
    corpus = _median_by_horizon(errors[others], np.zeros(MAX_HORIZON))
    if oracle == "none":
        return {}, np.zeros(MAX_HORIZON)
    if oracle == "corpus":
        return {}, corpus
    if oracle == "project":
        out = {}
        for i, r in enumerate(refs):
            row = errors[i][np.isfinite(errors[i])]
            out[r] = np.full(MAX_HORIZON, np.median(row)) if row.size else corpus
        return out, corpus
    by_district: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, r in enumerate(refs):
        if others[i]:
            by_district[(r.outer, r.inner)].append(i)
    district = {g: _median_by_horizon(errors[rows], corpus) for g, rows in by_district.items()}
    return {r: district.get((r.outer, r.inner), corpus) for r in refs}, corpus


def main() -> None:
    """Score ``--dataset``'s reasoning items once per oracle and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--dataset", required=True, help="a `foretab bench build` split")
    parser.add_argument("--oracle", default=",".join(ORACLES), help=", ".join(ORACLES))
    parser.add_argument("--decision", default=None, help="as `foretab bench run --decision`")
    args = parser.parse_args()
    oracles = [o.strip() for o in args.oracle.split(",") if o.strip()]
    unknown = sorted(set(oracles) - set(ORACLES))
    if unknown:
        parser.error(f"unknown oracle {', '.join(unknown)}; use {', '.join(ORACLES)}")
    items = [i for i in read_items(args.dataset) if i.task == "reasoning"]
    asked = {p for item in items for p in item.projects}
    model, refs, errors = realised_errors(args.db)
    print(f"{args.db}: {len(items)} reasoning items; {len(refs)} projects scored")
    print(f"{'oracle':10s} {'accuracy':>9s} {'F1':>7s}")
    for oracle in oracles:
        shifts, default = oracle_shifts(oracle, refs, errors, asked)
        shifted = ShiftedModel(model, shifts, default)
        engine = build_engine(
            args.db,
            future_source=lambda e, m=shifted: ModelSource.with_store_dates(m, e.store),
            analyzer=_analyzer(args.decision),
        )
        try:
            scores = run_benchmark(engine, items).to_dict()["reasoning"]
        finally:
            engine.close()
        print(f"{oracle:10s} {scores['accuracy']:9.2f} {scores['f1']:7.2f}")


def _analyzer(decision: str | None) -> object:
    from foretab.analyze.answer import RuleAnalyzer

    return RuleAnalyzer(decision) if decision else None


if __name__ == "__main__":
    main()
