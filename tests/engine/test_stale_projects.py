"""Projects whose history ends long before R: a clear error naming the last month, never NaN.

On the real corpus (R = 2021-12) about 170 projects were last observed in 2019; the
forecaster reads the 24 months up to R, so it has nothing to forecast them from.
"""

from __future__ import annotations

import json
import math

import pytest

from foretab.core.months import Month
from foretab.engine import Engine
from foretab.errors import ForecastError, ForetabError
from foretab.forecast.source import ModelSource
from tests.doubles import NaiveStoreModel

R = Month(2021, 12)


@pytest.mark.slow
def test_stale_projects_get_a_clear_error_and_no_nan(corpus_db: str) -> None:
    with Engine.open(
        corpus_db, future_source=lambda e: ModelSource.with_store_dates(NaiveStoreModel(), e.store)
    ) as engine:
        stale = [p for p in engine.store.entities() if p.last_month < R - 23]
        assert len(stale) >= 100, "fixture assumption: the corpus has stale projects"
        named_month = 0
        for p in stale:
            question = f"What will the price of {p.name} in {p.inner}, {p.outer} be next month?"
            try:
                answer = engine.ask(question)
            except ForecastError as error:
                assert p.last_month.label in error.message, error.message
                named_month += 1
                continue
            except ForetabError:
                continue  # a name the parser cannot resolve: still an explained refusal
            # Answered (the question resolved to another, active project): finite, strict JSON.
            json.loads(json.dumps(answer.to_dict(), allow_nan=False))
            assert all(
                math.isfinite(v) for row in answer.answer for v in row if isinstance(v, float)
            )
        assert named_month >= 0.9 * len(stale)
