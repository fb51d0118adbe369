"""POST /api/sql runs forecast(): the numbers POST /api/ask gives; a bad call is a 400 with its rule."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from foretab.core.months import Month
from foretab.engine import Engine
from foretab.web import EnginePool
from tests.conftest import MINI_CSV
from tests.web.conftest import client_for

TABLE = "project_price_table_huangpu_district_shanghai_2021"
PROJECT = "Bund Garden"


@pytest.fixture(scope="module")
def model_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    from foretab.forecast.store import train_store_model
    from foretab.store.ingest import ingest_path

    db = str(tmp_path_factory.mktemp("web-forecast") / "mini.duckdb")
    ingest_path(MINI_CSV, db, Month(2021, 12))
    train_store_model(db)

    def build(mode: str, warm: Engine | None) -> Engine:
        return Engine.open(db, future=mode)  # type: ignore[arg-type]

    pool = EnginePool(build, size=1, default="model")
    with client_for(pool) as client:
        yield client
    pool.close()


@pytest.mark.slow  # trains a model store (~3 s); tests/sql/test_forecast_sql.py covers forecast() fast
def test_forecast_relation_over_http(model_client: TestClient) -> None:
    ok = model_client.post(
        "/api/sql",
        json={
            "sql": f"SELECT value, lo, hi FROM forecast('{TABLE}', horizon => 3) "
            "WHERE project_name = ? AND month = DATE '2022-03-01'",
            "params": [PROJECT],
        },
    )
    assert ok.status_code == 200, ok.text
    ((value, lo, hi),) = ok.json()["rows"]
    asked = model_client.post(
        "/api/ask",
        json={
            "question": f"What will the price of {PROJECT} in Huangpu, Shanghai be in March 2022?"
        },
    )
    assert asked.status_code == 200, asked.text
    doc = asked.json()
    assert doc["answer"] == [[round(value, 2)]]
    (interval,) = doc["intervals"]
    assert (round(interval["lo"], 2), round(interval["hi"], 2)) == (round(lo, 2), round(hi, 2))


@pytest.mark.slow  # trains a model store (~3 s); tests/sql/test_forecast_sql.py covers forecast() fast
def test_refused_call_names_its_rule(model_client: TestClient) -> None:
    refused = model_client.post(
        "/api/sql", json={"sql": f"SELECT * FROM forecast('{TABLE}', horizon => 99)"}
    )
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert error["type"] == "GuardError" and error["rule"] == "forecast-option"
