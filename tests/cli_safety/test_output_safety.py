"""Names from a store are printed as text: no markup crash, no raw control sequences."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from foretab.cli.main import _register, app
from foretab.cli.safe_text import clean
from foretab.months import Month
from foretab.store.ingest import ingest_frame

MARKUP_PROJECT = "Tower [/bold] X"
MARKUP_DISTRICT = "[/] District"
OSC_PROJECT = "Evil \x1b]0;pwned\x07 \x1b[2J Park \x9b31m"


@pytest.fixture(scope="module")
def odd_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    rows = [
        {
            "city": "Nanjing",
            "district": district,
            "project": project,
            "month": f"2021-{m:02d}",
            "avg_price": 20_000.0 + m,
            "units_sold": m,
        }
        for district, project in (
            (MARKUP_DISTRICT, MARKUP_PROJECT),
            ("Gulou District", OSC_PROJECT),
        )
        for m in range(1, 13)
    ]
    db = str(tmp_path_factory.mktemp("odd-names") / "odd.duckdb")
    ingest_frame(pd.DataFrame(rows), db, Month.parse("2021-12"))
    return db


def _assert_safe(output: str) -> None:
    assert "\x1b]" not in output and "\x07" not in output and "\x9b" not in output
    assert "\x1b[2J" not in output


def test_tables_prints_markup_like_names_verbatim(odd_store: str) -> None:
    _register()
    result = CliRunner().invoke(app, ["tables", "--db", odd_store])
    assert result.exit_code == 0, result.output
    assert MARKUP_DISTRICT in result.output
    _assert_safe(result.output)


def test_sql_prints_control_sequences_stripped(odd_store: str) -> None:
    _register()
    from foretab.store import open_history

    with open_history(odd_store) as store:
        table = next(e.table_name for e in store.catalog() if e.district == "Gulou District")
    result = CliRunner().invoke(
        app, ["sql", f"SELECT project_name FROM {table} LIMIT 1", "--db", odd_store]
    )
    assert result.exit_code == 0, result.output
    assert "Evil" in result.output and "Park" in result.output
    _assert_safe(result.output)


def test_ask_prints_markup_like_names(odd_store: str) -> None:
    _register()
    question = f"What was the price of {MARKUP_PROJECT} in March 2021?"
    result = CliRunner().invoke(app, ["ask", question, "--db", odd_store])
    # Answered or refused, never a crash (a MarkupError exits 1 with a traceback).
    assert result.exit_code in (0, 2), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    _assert_safe(result.output)


def test_errors_strip_control_characters(odd_store: str) -> None:
    _register()
    result = CliRunner().invoke(app, ["sql", "SELECT \x1b]0;x\x07 1", "--db", odd_store])
    assert result.exit_code == 2
    _assert_safe(result.output)


def test_clean_keeps_text_and_drops_controls() -> None:
    assert clean("Baoan 宝安 [b]\tx\n") == "Baoan 宝安 [b]\tx\n"
    assert clean("a\x1b[31mb\x07c\u202ed\x9b") == "a[31mbcd"
