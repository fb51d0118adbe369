"""``foretab serve`` refuses to expose the API without a token."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from foretab.cli.main import app, register_commands
from foretab.cli.serve import is_loopback


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.0.2.7", False),
        ("example.org", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def _serve(*args: str) -> tuple[int, str]:
    register_commands()
    result = CliRunner().invoke(app, ["serve", *args], env={"FORETAB_TOKEN": ""})
    return result.exit_code, result.output


def test_binding_beyond_loopback_needs_a_token(mini_duckdb: str) -> None:
    code, output = _serve("--db", mini_duckdb, "--host", "0.0.0.0")
    assert code == 2
    assert "--token" in output and "0.0.0.0" in output


def test_a_short_token_is_refused(mini_duckdb: str) -> None:
    code, output = _serve("--db", mini_duckdb, "--host", "0.0.0.0", "--token", "abc")
    assert code == 2 and "16 characters" in output


def test_a_missing_store_is_reported(tmp_path) -> None:
    # One worker: the default (one per core) started two server processes here, the slow
    # variant of tests/web/test_workers.py's test of a worker that cannot open the store.
    code, output = _serve("--db", str(tmp_path / "none.duckdb"), "--workers", "1")
    assert code == 2 and "foretab ingest" in output


def test_future_oracle_needs_allow_oracle(mini_duckdb: str) -> None:
    code, output = _serve("--db", mini_duckdb, "--future", "oracle")
    assert code == 2 and "--allow-oracle" in output


@pytest.mark.parametrize(
    "token", ["pässwörd-pässwörd-1234", "token with spaces 0123456", "tab\tseparated-0123456789"]
)
def test_a_token_no_header_can_carry_is_refused(mini_duckdb: str, token: str) -> None:
    code, output = _serve("--db", mini_duckdb, "--token", token)
    assert code == 2 and "printable ASCII" in output
