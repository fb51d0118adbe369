"""``stored_year``: the saved model and its future year, as the diagnostic scripts read it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from tests.bench.conftest import REFERENCE, synthetic_frame

from foretab.bench.forecast.corpus import stored_year
from foretab.forecast.base import MAX_HORIZON
from foretab.forecast.store import train_store_model
from foretab.store.ingest import ingest_frame


def test_stored_year_lines_up_each_project_with_its_own_future(tmp_path: Path) -> None:
    frame = synthetic_frame()
    db = str(tmp_path / "corpus.duckdb")
    ingest_frame(frame, db, REFERENCE)
    train_store_model(db, "naive")  # a saved model; which one does not matter here
    year = stored_year(db)
    n = len(year.refs)
    assert n > 0
    assert year.window.shape == (n, year.model.lookback)
    assert year.truth.shape == (n, MAX_HORIZON)
    # eligible: at least 6 observations in the 24 months to R and one in R+1..R+12
    assert (np.isfinite(year.window).sum(axis=1) >= 6).all()
    assert np.isfinite(year.truth).any(axis=1).all()
    for i in (0, n - 1):
        ref = year.refs[i]
        rows = frame[
            (frame.city == ref.outer) & (frame.district == ref.inner) & (frame.project == ref.name)
        ]
        price = dict(zip(rows.month, rows.avg_price, strict=True))
        ahead = [price.get((REFERENCE + k).iso, np.nan) for k in range(1, MAX_HORIZON + 1)]
        back = [price.get((REFERENCE - k).iso, np.nan) for k in range(year.model.lookback)]
        np.testing.assert_allclose(year.truth[i], ahead, equal_nan=True)
        np.testing.assert_allclose(year.window[i], back[::-1], equal_nan=True)
    # naive: every month of the year is the last observed price
    last = [row[np.isfinite(row)][-1] for row in year.window]
    np.testing.assert_allclose(year.forecast(), np.repeat(np.array(last)[:, None], 12, axis=1))
