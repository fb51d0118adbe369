"""Names from a store are printed as text: no markup crash, no raw control sequences."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from foretab.cli.main import app, register_commands
from foretab.cli.safe_text import clean
from foretab.core.months import Month
from foretab.store.ingest import ingest_frame

MARKUP_PROJECT = "Tower [/bold] X"
MARKUP_DISTRICT = "[/] District"
OSC_PROJECT = "Evil \x1b]0;pwned\x07 \x1b[2J Park \x9b31m"
LINK_PROJECT = "[link=https://evil.example]Click[/link] \u202eKrap"


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
            ("Xuanwu District", LINK_PROJECT),
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
    register_commands()
    result = CliRunner().invoke(app, ["tables", "--db", odd_store])
    assert result.exit_code == 0, result.output
    assert MARKUP_DISTRICT in result.output
    _assert_safe(result.output)


def test_projects_prints_names_as_text(odd_store: str) -> None:
    register_commands()
    result = CliRunner().invoke(app, ["projects", "--db", odd_store], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert MARKUP_PROJECT in result.output and MARKUP_DISTRICT in result.output
    assert "[link=https://evil.example]Click[/link]" in result.output  # shown, not a link
    assert "\x1b]8;" not in result.output and "\u202e" not in result.output
    _assert_safe(result.output)


def test_ask_forecast_basis_prints_names_as_text(odd_store: str) -> None:
    register_commands()
    question = (
        f"What will the price of {MARKUP_PROJECT} in {MARKUP_DISTRICT}, Nanjing be next month?"
    )
    result = CliRunner().invoke(app, ["ask", question, "--db", odd_store, "--future", "none"])
    assert result.exit_code == 0, result.output
    assert f"{MARKUP_PROJECT}:" in result.output  # the forecast's basis line, verbatim


def test_sql_prints_control_sequences_stripped(odd_store: str) -> None:
    register_commands()
    from foretab.store import open_history

    with open_history(odd_store) as store:
        table = next(e.table_name for e in store.catalog() if e.inner == "Gulou District")
    result = CliRunner().invoke(
        app, ["sql", f"SELECT project_name FROM {table} LIMIT 1", "--db", odd_store]
    )
    assert result.exit_code == 0, result.output
    assert "Evil" in result.output and "Park" in result.output
    _assert_safe(result.output)


def test_ask_prints_markup_like_names(odd_store: str) -> None:
    register_commands()
    question = f"What was the price of {MARKUP_PROJECT} in March 2021?"
    result = CliRunner().invoke(app, ["ask", question, "--db", odd_store])
    # Answered or refused, never a crash (a MarkupError exits 1 with a traceback).
    assert result.exit_code in (0, 2), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    _assert_safe(result.output)


def test_errors_strip_control_characters(odd_store: str) -> None:
    register_commands()
    result = CliRunner().invoke(app, ["sql", "SELECT \x1b]0;x\x07 1", "--db", odd_store])
    assert result.exit_code == 2
    _assert_safe(result.output)


def test_clean_keeps_text_and_drops_controls() -> None:
    assert clean("Baoan 宝安 [b]\tx\n") == "Baoan 宝安 [b]\tx\n"
    assert clean("a\x1b[31mb\x07c\u202ed\x9b") == "a[31mbcd"


# Every code point ``--json`` must never print raw: DEL, C1 (U+009B CSI, U+009D OSC), bidi
# marks/overrides/isolates, line separators, and a lone surrogate (undecodable argv bytes).
JSON_UNSAFE = "\x7f\x85\x9b\x9d\u061c\u200e\u200f\u2028\u2029\u202a\u202e\u2066\u2069\udcff"
BIDI_PROJECT = "Cheap \u202egnihtoN\u202c Villa \x9b2J \x9d0;t\x9c"


def _raw_unsafe(text: str) -> list[str]:
    return [f"U+{ord(c):04X}" for c in text if c in JSON_UNSAFE]


def test_json_writers_escape_terminal_controls_and_round_trip() -> None:
    import json

    from foretab.core.schema import ErrorBody, ErrorDoc, dumps, dumps_plain

    every = "".join(chr(c) for c in range(0x7F, 0xA0)) + JSON_UNSAFE + "宝安 ok"
    for text in (
        dumps_plain({every: [every, 1.5]}, ensure_ascii=False),
        dumps_plain({every: every}, ensure_ascii=False, indent=2),
        dumps(ErrorDoc(error=ErrorBody(type="X", message=every, suggestions=[every]))),
    ):
        assert _raw_unsafe(text) == []
        assert not any(0x7F <= ord(c) <= 0x9F for c in text)
        assert "宝安" in text  # other non-ASCII stays readable
        loaded = json.loads(text)
        assert every in json.dumps(loaded, ensure_ascii=False)  # the original strings back
    assert json.loads(dumps_plain({"k": every}, ensure_ascii=False)) == {"k": every}


@pytest.fixture(
    scope="module",
    params=["duckdb", pytest.param("postgresql", marks=pytest.mark.postgres)],
)
def c1_store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    rows = [
        {
            "city": "Nanjing",
            "district": "Gulou \u2066District\u2069",
            "project": project,
            "month": f"2021-{m:02d}",
            "avg_price": 20_000.0 + m,
            "units_sold": m,
        }
        for project in (BIDI_PROJECT, OSC_PROJECT)
        for m in range(1, 13)
    ]
    if request.param == "duckdb":
        db = str(tmp_path_factory.mktemp("c1-names") / "c1.duckdb")
    else:
        server = request.getfixturevalue("pg_server")
        db = server.url(server.fresh_dbname("c1"))
    ingest_frame(pd.DataFrame(rows), db, Month.parse("2021-12"))
    return db


def _json_lines(db: str, *args: str) -> object:
    import json

    register_commands()
    result = CliRunner().invoke(app, [*args, "--db", db, "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert _raw_unsafe(result.stdout) == [], result.stdout
    assert not any(0x80 <= ord(c) <= 0x9F for c in result.stdout)
    return json.loads(result.stdout)


def test_every_json_command_escapes_c1_and_bidi(c1_store: str) -> None:
    from foretab.store import open_history

    with open_history(c1_store) as store:
        table = store.catalog()[0].table_name
    tables = _json_lines(c1_store, "tables")
    assert {row["district"] for row in tables} == {"Gulou \u2066District\u2069"}  # type: ignore[union-attr,index]
    projects = _json_lines(c1_store, "projects")
    assert {p["project"] for p in projects} == {BIDI_PROJECT, OSC_PROJECT}  # type: ignore[union-attr,index]
    result = _json_lines(c1_store, "sql", f"SELECT DISTINCT project_name FROM {table} ORDER BY 1")
    assert sorted(r[0] for r in result["rows"]) == sorted([BIDI_PROJECT, OSC_PROJECT])  # type: ignore[index]
    answer = _json_lines(c1_store, "ask", f"What was the price of {BIDI_PROJECT} in March 2021?")
    assert BIDI_PROJECT in answer["text"] and BIDI_PROJECT in answer["question"]  # type: ignore[index]
    # An error document quoting the question (a lone surrogate: undecodable argv bytes).
    error = _json_lines(c1_store, "ask", "What was the price of Zzz\x9bq\udcff in Nanjing in 2021?")
    assert "Zzz\x9bq" in error["error"]["message"]  # type: ignore[index]


def test_clean_drops_separators_marks_and_lone_surrogates() -> None:
    assert clean("a\u2028b\u2029c\u061cd\udcffe\u200ff") == "abcdef"
