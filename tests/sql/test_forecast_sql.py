"""forecast() in the guarded SQL: the numbers `foretab ask` gives, as a relation, on both backends.

A store of its own (the shared guard store must not change): the demo corpus with the
default model fitted, on DuckDB and PostgreSQL.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sql_stores import HISTORY_2020, HISTORY_2021, PROJECT, demo_frame

from foretab.core.months import Month
from foretab.core.plan import EntityRef
from foretab.engine import Engine
from foretab.errors import GuardError, QueryError
from foretab.sql.forecast_rows import StoreForecasts
from foretab.sql.guard import GuardedExecutor

PROJECTS = ("Greenland Lixiang City", "Poly Central Park")
R = Month(2021, 12)


@pytest.fixture(
    scope="module", params=["duckdb", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
def model_db(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The demo store with the default model saved with it."""
    from foretab.backend.postgres import ensure_reader_role
    from foretab.forecast.store import train_store_model
    from foretab.store.ingest import ingest_frame

    if request.param == "duckdb":
        db = str(tmp_path_factory.mktemp("forecast-sql") / "corpus.duckdb")
        ingest_frame(demo_frame(), db, R)
        train_store_model(db)
        yield db
        return
    import psycopg

    server = request.getfixturevalue("pg_server")
    name = server.fresh_dbname("fsql")
    db = server.url(name)
    ingest_frame(demo_frame(), db, R)
    ensure_reader_role(db)
    train_store_model(db)
    yield db
    with psycopg.connect(server.url("postgres"), autocommit=True) as conn:
        for each in (name, f"{name}_future"):
            conn.execute(f'DROP DATABASE IF EXISTS "{each}" WITH (FORCE)')


@pytest.fixture(scope="module")
def engine(model_db: str) -> Iterator[Engine]:
    with Engine.open(model_db) as built:
        yield built


def _question(project: str, month: Month) -> str:
    return f"What will the price of {project} in Jiangning, Nanjing be in {month.label}?"


def test_values_and_intervals_are_what_ask_gives(engine: Engine) -> None:
    result = engine.sql(
        f"SELECT project_name, month, value, lo, hi FROM forecast('{HISTORY_2021}') "
        "ORDER BY project_name, month"
    )
    assert result.columns == ("project_name", "month", "value", "lo", "hi")
    assert len(result.rows) == 2 * 12
    assert {row[0] for row in result.rows} == set(PROJECTS)
    for name, first_day, value, lo, hi in result.rows:
        month = Month.from_date(first_day)
        assert R < month <= R + 12
        answer = engine.ask(_question(name, month))
        # To the cent, as `foretab ask` prints them, and the very same floats underneath.
        assert answer.answer == [[round(value, 2)]]
        (interval,) = answer.intervals
        assert (round(interval.lo, 2), round(interval.hi, 2)) == (round(lo, 2), round(hi, 2))
        point = answer.forecast.points[EntityRef("Nanjing", "Jiangning District", name)][month]
        assert (point.value, point.lo, point.hi) == (value, lo, hi)


def test_level_matches_ask_at_that_level(model_db: str, engine: Engine) -> None:
    month = R + 3
    result = engine.sql(
        f"SELECT lo, hi FROM forecast('{HISTORY_2021}', level => 0.9, horizon => 3, "
        f"entities => ['{PROJECT}']) WHERE month = ?",
        [month.first_day],
    )
    ((lo, hi),) = result.rows
    with Engine.open(model_db, level=0.9) as wide:
        (interval,) = wide.ask(_question(PROJECT, month)).intervals
    assert (interval.lo, interval.hi) == (lo, hi)
    narrow = engine.sql(
        f"SELECT lo, hi FROM forecast('{HISTORY_2021}', horizon => 3) "
        f"WHERE project_name = ? AND month = ?",
        [PROJECT, month.first_day],
    ).rows[0]
    assert hi - lo > narrow[1] - narrow[0]


def test_horizon_and_entities_shape_the_relation(engine: Engine) -> None:
    rows = engine.sql(
        f"SELECT project_name, month FROM forecast('{HISTORY_2021}', horizon => 3, "
        f"entities => ['{PROJECT}']) ORDER BY month"
    ).rows
    assert rows == tuple((PROJECT, (R + k).first_day) for k in (1, 2, 3))


def test_any_year_table_forecasts_from_the_same_history(engine: Engine) -> None:
    """A 2020 table names the same projects: their forecast reads the 24 months to R."""
    old = engine.sql(f"SELECT * FROM forecast('{HISTORY_2020}') ORDER BY 1, 2").rows
    new = engine.sql(f"SELECT * FROM forecast('{HISTORY_2021}') ORDER BY 1, 2").rows
    assert old == new


def test_rank_by_forecast_in_one_statement(engine: Engine) -> None:
    result = engine.sql(
        "SELECT project_name, AVG(value) FROM forecast("
        f"'{HISTORY_2021}', horizon => 12) GROUP BY project_name ORDER BY 2 DESC LIMIT 5"
    )
    assert [row[0] for row in result.rows] == ["Poly Central Park", "Greenland Lixiang City"]
    mean = engine.ask(
        "What will the average price of Poly Central Park in Jiangning, Nanjing be next year?"
    ).answer
    assert mean == [[round(result.rows[0][1], 2)]]


def test_joins_history_in_ctes(engine: Engine) -> None:
    """Forecast vs last year, the interval width: CTEs, a join with a history table."""
    result = engine.sql(
        f"""
        WITH f AS (SELECT project_name, AVG(value) AS next_year, AVG(hi - lo) AS width
                   FROM forecast('{HISTORY_2021}') GROUP BY project_name),
             h AS (SELECT project_name, AVG(price) AS last_year FROM {HISTORY_2021}
                   GROUP BY project_name)
        SELECT f.project_name, f.next_year - h.last_year AS change, f.width
        FROM f JOIN h ON h.project_name = f.project_name ORDER BY 1
        """
    )
    assert [row[0] for row in result.rows] == list(PROJECTS)
    assert all(width > 0 for _, _, width in result.rows)
    two = engine.sql(
        f"SELECT a.project_name, a.value - b.value FROM forecast('{HISTORY_2021}', horizon => 2) a "
        f"JOIN forecast('{HISTORY_2020}', horizon => 2) b "
        "ON a.project_name = b.project_name AND a.month = b.month"
    )
    assert len(two.rows) == 4
    assert {row[1] for row in two.rows} == {0.0}


def test_values_are_bound_not_pasted(engine: Engine) -> None:
    result = engine.sql(f"SELECT value FROM forecast('{HISTORY_2021}', horizon => 1) AS f")
    value = result.rows[0][0]
    assert "UNNEST(CAST(" in result.sql
    assert str(round(value)) not in result.sql
    assert PROJECT not in result.sql
    assert engine.guard.prepare(f"SELECT * FROM forecast('{HISTORY_2021}')").startswith("WITH")


@pytest.mark.parametrize(
    "names", [["No Such Project"], ["Tomson Riviera"], [PROJECT, "Poly Central Park 2"]]
)
def test_entities_must_be_the_tables(engine: Engine, names: list[str]) -> None:
    """Names of no entity, or of another place's (Tomson Riviera is in Pudong), are refused."""
    listed = ", ".join(f"'{n}'" for n in names)
    with pytest.raises(GuardError) as caught:
        engine.sql(f"SELECT * FROM forecast('{HISTORY_2021}', entities => [{listed}])")
    assert caught.value.rule == "forecast-option"
    assert names[-1] in caught.value.message


@pytest.mark.slow_variant("postgresql")
def test_model_loading_is_not_the_statements_time(model_db: str) -> None:
    """The model file loads once per engine (like opening the store), outside the limit."""
    from foretab.store import open_history

    class SlowToLoad(StoreForecasts):
        def load(self) -> None:
            time.sleep(1.2)
            super().load()

    with open_history(model_db) as store:
        provider = SlowToLoad(store)
        with GuardedExecutor(store, timeout_s=1.0, forecasts=provider) as guard:
            assert len(guard.execute(f"SELECT * FROM forecast('{HISTORY_2021}')").rows) == 24


def test_placeholders_of_the_statement_still_bind(engine: Engine) -> None:
    rows = engine.sql(
        f"SELECT COUNT(*) FROM forecast('{HISTORY_2021}') WHERE project_name = ? AND value > ?",
        [PROJECT, 0],
    ).rows
    assert rows == ((12,),)
    with pytest.raises(QueryError, match="placeholder"):
        engine.sql(f"SELECT * FROM forecast('{HISTORY_2021}') WHERE value > ?")


def test_row_cap_holds(model_db: str) -> None:
    with Engine.open(model_db, max_rows=60) as capped:
        result = capped.sql(
            f"SELECT * FROM forecast('{HISTORY_2021}') a, forecast('{HISTORY_2021}') b"
        )
        assert result.truncated and len(result.rows) == 60
    with Engine.open(model_db, max_rows=20) as capped, pytest.raises(QueryError, match="row cap"):
        # The history the forecast reads (48 rows) is over the cap: refused, never cut short.
        capped.sql(f"SELECT * FROM forecast('{HISTORY_2021}', horizon => 1)")


@pytest.mark.slow_variant("postgresql")
def test_time_limit_counts_the_forecast(model_db: str) -> None:
    """The engine-side forecast shares the statement's time limit."""
    from foretab.store import open_history

    class Slow(StoreForecasts):
        def rows(self, calls, guard):  # type: ignore[no-untyped-def]
            time.sleep(1.2)
            return super().rows(calls, guard)

    with open_history(model_db) as store:
        slow = Slow(store)
        with GuardedExecutor(store, timeout_s=1.0, forecasts=slow) as guard:
            started = time.perf_counter()
            with pytest.raises(QueryError, match="timed out after 1 s"):
                guard.execute(f"SELECT * FROM forecast('{HISTORY_2021}')")
            assert time.perf_counter() - started < 4
            assert guard.execute("SELECT COUNT(*) FROM foretab_catalog").rows == ((3,),)
        with GuardedExecutor(store, timeout_s=0.5, forecasts=StoreForecasts(store)) as guard:
            runaway = (
                f"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
                f"SELECT count(*) FROM r, forecast('{HISTORY_2021}')"
            )
            with pytest.raises(QueryError, match="timed out"):
                guard.execute(runaway)


@pytest.mark.slow_variant("postgresql")
def test_memory_and_result_caps_hold(model_db: str) -> None:
    """The statement runs in the worker under its caps, forecasts or not."""
    from foretab.store import open_history

    mib = 2**20
    huge = (
        "SELECT lpad(a.project_name, 1000000, 'x') AS v "
        f"FROM forecast('{HISTORY_2021}') a, forecast('{HISTORY_2021}') b"
    )
    with open_history(model_db) as store:
        forecasts = StoreForecasts(store)
        with GuardedExecutor(
            store,
            timeout_s=10.0,
            memory_bytes=300 * mib,
            max_result_bytes=400 * mib,
            forecasts=forecasts,
        ) as guard:
            with pytest.raises(QueryError, match="memory"):
                guard.execute(huge)
            assert len(guard.execute(f"SELECT * FROM forecast('{HISTORY_2021}')").rows) == 24
        with GuardedExecutor(store, max_result_bytes=4 * mib, forecasts=forecasts) as guard:
            capped = guard.execute(huge.replace("1000000", "100000"))
    assert capped.truncated_by == "bytes" and 0 < len(capped.rows) < 576


def test_future_store_is_never_opened(model_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import foretab.forecast.sources
    import foretab.store

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("forecast() opened the future store")

    monkeypatch.setattr(foretab.store, "open_future", refuse)
    monkeypatch.setattr(foretab.forecast.sources, "open_future", refuse)
    with Engine.open(model_db) as fresh:
        assert len(fresh.sql(f"SELECT * FROM forecast('{HISTORY_2021}')").rows) == 24


def test_oracle_engine_still_forecasts_with_the_model(model_db: str, engine: Engine) -> None:
    """An evaluation engine reading the future store does not leak it into forecast()."""
    sql = f"SELECT * FROM forecast('{HISTORY_2021}') ORDER BY 1, 2"
    with Engine.open(model_db, future="oracle") as oracle:
        assert oracle.sql(sql).rows == engine.sql(sql).rows


def test_store_without_model_says_how_to_fit_one(tmp_path: Path) -> None:
    from foretab.errors import ForecastError
    from foretab.store.ingest import ingest_frame

    db = str(tmp_path / "corpus.duckdb")
    ingest_frame(demo_frame(), db, R)
    with Engine.open(db) as bare, pytest.raises(ForecastError, match="no model") as caught:
        bare.sql(f"SELECT * FROM forecast('{HISTORY_2021}')")
    assert any("foretab train" in hint for hint in caught.value.suggestions)


def test_plain_executor_refuses_with_a_rule(model_db: str) -> None:
    with GuardedExecutor(model_db) as guard, pytest.raises(GuardError) as caught:
        guard.execute(f"SELECT * FROM forecast('{HISTORY_2021}')")
    assert caught.value.rule == "forecast-unavailable"


def test_months_are_dates(engine: Engine) -> None:
    (row,) = engine.sql(
        f"SELECT month FROM forecast('{HISTORY_2021}', horizon => 1, entities => ['{PROJECT}'])"
    ).rows
    assert row == (dt.date(2022, 1, 1),)


def test_foretab_sql_gives_what_foretab_ask_gives(model_db: str) -> None:
    import json

    from typer.testing import CliRunner

    from foretab.cli import ask, query  # noqa: F401  (register the commands)
    from foretab.cli.main import app

    runner = CliRunner()
    month = R + 2
    sql = runner.invoke(
        app,
        [
            "sql",
            f"SELECT value, lo, hi FROM forecast('{HISTORY_2021}', horizon => 2, "
            f"entities => ['{PROJECT}']) WHERE month = DATE '{month.first_day.isoformat()}'",
            "--db",
            model_db,
            "--json",
        ],
    )
    assert sql.exit_code == 0, sql.output
    ((value, lo, hi),) = json.loads(sql.stdout)["rows"]
    asked = runner.invoke(app, ["ask", _question(PROJECT, month), "--db", model_db, "--json"])
    assert asked.exit_code == 0, asked.output
    doc = json.loads(asked.stdout)
    assert doc["answer"] == [[round(value, 2)]]
    (interval,) = doc["intervals"]
    assert (round(interval["lo"], 2), round(interval["hi"], 2)) == (round(lo, 2), round(hi, 2))


DOCS = Path(__file__).resolve().parents[2] / "docs" / "forecast-sql.md"


def test_docs_page_names_every_rule_and_its_examples_pass_the_guard(model_db: str) -> None:
    import re

    from foretab.sql.rules import RULES

    text = DOCS.read_text(encoding="utf-8")
    for rule in (r for r in RULES if r.startswith("forecast-")):
        assert f"`{rule}`" in text, f"docs/forecast-sql.md does not describe {rule}"
    for column in ("project_name", "month", "value", "lo", "hi"):
        assert f"| `{column}`" in text
    blocks = re.findall(r"```sql\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) >= 2
    with Engine.open(model_db) as engine:
        for block in blocks:
            assert engine.sql(block).rows, block


def test_elapsed_time_counts_the_forecast(model_db: str) -> None:
    from foretab.store import open_history

    class Slow(StoreForecasts):
        def rows(self, calls, guard):  # type: ignore[no-untyped-def]
            time.sleep(0.3)
            return super().rows(calls, guard)

    with open_history(model_db) as store, GuardedExecutor(store, forecasts=Slow(store)) as guard:
        result = guard.execute(f"SELECT * FROM forecast('{HISTORY_2021}')")
    assert result.elapsed_s >= 0.3
