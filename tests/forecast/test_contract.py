"""One contract test over every registered forecaster and imputer (STYLE: statsforecast)."""

from __future__ import annotations

import numpy as np
import pytest

from foretab.errors import ForecastError
from foretab.forecast import FORECASTERS, IMPUTERS, NEURAL, get_forecaster, get_imputer
from foretab.forecast.neural import neural_installed

from .synthetic import make_panel

NEURAL_MISSING = (
    "torch / neuralforecast not installed (pip install torch==2.13.0 'foretab[neural]')"
)


def _params(names: list[str]) -> list[object]:
    out = []
    for name in names:
        if name in NEURAL:
            marks = [
                pytest.mark.neural,
                pytest.mark.slow,  # a torch fit (~4 s); the other forecasters keep the contract fast
                pytest.mark.skipif(not neural_installed(), reason=NEURAL_MISSING),
            ]
            out.append(pytest.param(name, marks=marks, id=name))
        else:
            out.append(pytest.param(name, id=name))
    return out


def _fitted(name: str, seed: int, panel: np.ndarray) -> object:
    model = get_forecaster(name, seed)
    if name in NEURAL:
        model.max_steps = 3  # the contract, not the accuracy
    elif name.startswith("lgbm"):
        model.default_rounds = 20
    return model.fit(panel)


@pytest.mark.parametrize("name", _params(sorted(FORECASTERS)))
def test_forecaster_contract(name: str) -> None:
    train = make_panel(60, 30, seed=1)
    history = make_panel(25, 24, seed=2)
    history[0, :] = np.nan
    history[0, 5] = 20_000.0  # one observation
    history[1, 10:] = np.nan  # a long gap at the end
    history[1, :10] = 30_000.0
    history[2, :20] = np.nan  # four observations only, at the very end
    model = _fitted(name, 7, train)
    pred = model.predict(history, 12)
    assert pred.shape == (25, 12)
    assert np.isfinite(pred).all()
    assert (pred > 0).all()
    # A lone observation or a stale flat series: stay near the last known level.
    assert np.all(np.abs(pred[0] / 20_000.0 - 1) < 0.5)
    assert np.all(np.abs(pred[1] / 30_000.0 - 1) < 0.5)
    assert model.predict(history, 3).shape == (25, 3)
    again = _fitted(name, 7, train).predict(history, 12)
    np.testing.assert_allclose(pred, again, rtol=1e-6)


@pytest.mark.parametrize("name", _params(sorted(FORECASTERS)))
def test_forecaster_rejects_bad_horizon(name: str) -> None:
    model = _fitted(name, 0, make_panel(30, 26, seed=3))
    with pytest.raises(ForecastError, match="horizon"):
        model.predict(make_panel(5, 24, seed=4), 13)


@pytest.mark.parametrize("name", sorted(IMPUTERS))
def test_imputer_contract(name: str) -> None:
    panel = make_panel(40, 24, seed=5)
    panel[0, :] = np.nan
    panel[0, 3] = 15_000.0
    panel[1, 6:] = np.nan
    imputer = get_imputer(name, seed=3)
    if hasattr(imputer, "n_estimators"):
        imputer.n_estimators = 30
    imputer.fit(make_panel(80, 24, seed=6))
    filled = imputer.impute(panel)
    assert filled.shape == panel.shape
    assert np.isfinite(filled).all()
    observed = np.isfinite(panel)
    np.testing.assert_array_equal(filled[observed], panel[observed])
    assert np.all(np.abs(filled[0] / 15_000.0 - 1) < 0.3)
    last = panel[1, np.isfinite(panel[1])][-1]
    assert np.all(np.abs(filled[1, 6:] / last - 1) < 0.3)
    again = get_imputer(name, seed=3)
    if hasattr(again, "n_estimators"):
        again.n_estimators = 30
    np.testing.assert_allclose(filled, again.fit(make_panel(80, 24, seed=6)).impute(panel))


def test_unknown_model_names_suggest_the_registered_ones() -> None:
    with pytest.raises(ForecastError) as err:
        get_forecaster("prophet")
    assert any("lgbm" in s for s in err.value.suggestions)
    with pytest.raises(ForecastError):
        get_imputer("mice")


@pytest.mark.parametrize("name", [n for n in sorted(FORECASTERS) if n not in NEURAL])
def test_quantiles_are_ordered_or_refused(name: str) -> None:
    model = _fitted(name, 0, make_panel(60, 30, seed=1))
    history = make_panel(10, 24, seed=2)
    if not model.supports_quantiles:
        with pytest.raises(ForecastError, match="no prediction intervals"):
            model.predict_quantiles(history, 12, (0.1, 0.9))
        return
    q = model.predict_quantiles(history, 12, (0.1, 0.5, 0.9))
    assert q.shape == (10, 12, 3) and np.isfinite(q).all()
    assert (q[:, :, 0] <= q[:, :, 1]).all() and (q[:, :, 1] <= q[:, :, 2]).all()
    assert (q[:, :, 0] < q[:, :, 2]).any()
    with pytest.raises(ForecastError, match="strictly between"):
        model.predict_quantiles(history, 12, (0.0, 0.5))


def test_statsforecast_forks_its_pool_only_for_many_series_in_a_single_threaded_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import threading

    model = get_forecaster("autoets")
    assert not model._pool_pays(10)  # too few series to pay for a pool
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not model._pool_pays(10_000)  # a fork would copy the other thread's locks
    finally:
        stop.set()
        other.join()
    # This process has other threads (xdist's, pytest's): a process with none is counted
    # as one thread. The slow variant below asks a fresh interpreter.
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    assert model._pool_pays(10_000)


@pytest.mark.slow  # a fresh interpreter importing the forecasters (~2 s of CPU); CI runs it
def test_statsforecast_forks_its_pool_in_a_fresh_single_threaded_process() -> None:
    import subprocess
    import sys

    code = (
        "from foretab.forecast import get_forecaster; "
        "print(get_forecaster('autoets')._pool_pays(10_000))"
    )
    alone = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert alone.stdout.strip() == "True", alone.stderr
