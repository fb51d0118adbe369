"""``bench corpus --answers``: the engine's stated intervals scored against the future store."""

from __future__ import annotations

import math

import pytest
from tests.doubles import SpreadStoreModel

from foretab.bench.forecast.answers import KindScore, bench_answers, coverage
from foretab.forecast.source import ModelSource


def test_coverage_counts_the_truths_inside_below_and_above() -> None:
    cov, width, below, above = coverage([0, 0, 0, 10], [1, 1, 1, 14], [0.5, 2, -1, 10])
    assert (cov, width, below, above) == (0.5, 1.75, 0.25, 0.25)
    assert all(math.isnan(v) for v in coverage([], [], []))


def _scored(db: str, sigma: float) -> dict[str, KindScore]:
    spread = lambda e: ModelSource.with_store_dates(SpreadStoreModel(sigma), e.store)  # noqa: E731
    (result,) = bench_answers(db, future_source=spread, limit=2)
    assert result.reference == "2021-12"
    return {k.kind: k for k in result.kinds}


@pytest.mark.slow  # two passes of the engine over the mini store: ~9 s
def test_every_kind_is_scored_through_the_engine(mini_duckdb: str) -> None:
    narrow, wide = _scored(mini_duckdb, 1e-6), _scored(mini_duckdb, 0.3)
    assert set(wide) == {
        *(f"window max {h}m" for h in (3, 6, 12)),
        "district month", "city month",
        *(f"{level} window {h}m" for level in ("district", "city") for h in (3, 6, 12)),
    }  # fmt: skip
    for kind, k in wide.items():
        assert k.n == narrow[kind].n
        if k.n:
            assert k.coverage + k.below + k.above == pytest.approx(1.0)
            assert k.mean_width > narrow[kind].mean_width
    assert wide["window max 3m"].n and wide["city month"].n
    # A project's maximum from (nearly) point forecasts is (nearly) never its true value.
    assert narrow["window max 3m"].coverage < 0.2 < wide["window max 3m"].coverage
