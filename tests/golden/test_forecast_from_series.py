"""The forecast stage forecasts the series the question read, with the store's fitted model.

Doubling a project's history in a copy of the store (a direct write, no retraining) must
roughly double its forecast: the model is applied to what was read, not looked up.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import duckdb
import pytest

from foretab.engine import Engine
from foretab.errors import ForecastError
from foretab.store import open_history

QUESTION = "What will the price of Lujiazui Pearl in Pudong, Shanghai be next month?"
TABLES = "project_price_table_pudong_new_area_shanghai_20"


@pytest.fixture(scope="module")
def trained_mini(
    tmp_path_factory: pytest.TempPathFactory, mini_duckdb: str, units_fit_once: object
) -> str:
    from foretab.forecast import registry, units_store
    from foretab.forecast.gbm import LightGBMForecaster
    from foretab.forecast.store import train_store_model

    db = _copy_store(mini_duckdb, tmp_path_factory.mktemp("trained") / "store")
    # The real code path and file format with a few small trees: what is tested is that
    # the stored model is applied to the series read, not the model's accuracy.
    saved = registry.FORECASTERS["lgbm"]
    registry.FORECASTERS["lgbm"] = lambda seed: LightGBMForecaster(
        seed, n_estimators=60, num_leaves=7, fixed_rounds=25
    )
    try:
        # The units model it also trains and saves is the golden cases' fit of the same
        # history (``units_fit_once``): fitted once per worker, not again here (~1.3 s).
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(units_store, "fit_units_store_model", units_fit_once)
            train_store_model(db, "lgbm")
    finally:
        registry.FORECASTERS["lgbm"] = saved
    return db


def _copy_store(db: str, folder: Path) -> str:
    folder.mkdir()
    for src in Path(db).parent.iterdir():
        target = folder / src.name
        if src.is_dir():
            shutil.copytree(src, target)
        else:
            shutil.copy(src, target)
    return str(folder / Path(db).name)


def _next_month(db: str) -> float:
    with Engine.open(db) as engine:
        answer = engine.ask(QUESTION)
    assert answer.trace.future_source == "model:lgbm"
    (value,) = answer.answer[0]
    assert isinstance(value, float) and math.isfinite(value)
    return value


def test_doubling_the_history_doubles_the_forecast(trained_mini: str, tmp_path: Path) -> None:
    before = _next_month(trained_mini)
    copy = _copy_store(trained_mini, tmp_path / "doubled")
    with open_history(copy) as store:
        tables = [e.table_name for e in store.catalog() if e.table_name.startswith(TABLES)]
    con = duckdb.connect(copy)
    try:
        for table in tables:
            con.execute(
                f'UPDATE "{table}" SET price = price * 2 WHERE project_name = ?', ["Lujiazui Pearl"]
            )
    finally:
        con.close()
    after = _next_month(copy)
    assert after / before == pytest.approx(2.0, rel=0.1)


def test_forecasts_carry_an_interval_and_the_basis(trained_mini: str) -> None:
    with Engine.open(trained_mini) as engine:
        answer = engine.ask(QUESTION)
    (ref,) = answer.plan.entities
    (point,) = answer.forecast.points[ref].values()
    basis = answer.forecast.basis[ref]
    assert basis.months_used > 0 and basis.last_observed is not None
    if point.lo is not None:
        assert point.lo <= point.value <= point.hi
    doc = answer.to_doc()
    assert doc.forecast[0].values[0].value == round(point.value, 2)


def test_a_stale_project_is_a_clear_error_never_nan(trained_mini: str) -> None:
    with Engine.open(trained_mini) as engine, pytest.raises(ForecastError, match="June 2019"):
        engine.ask(
            "What will the price of Chebei Lofts in Tianhe District, Guangzhou be next month?"
        )
