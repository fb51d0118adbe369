"""Secrets in errors (issue 28, item 8): the API key and --llm-base-url credentials never
appear in CLI errors (text or --json) or log lines, whatever the LLM server echoes."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from foretab.llm.redact import mask, redact_url, register_secret, register_url
from tests.llm.fake_openai import FakeOpenAIServer, Scripted

ENV_KEY = "sk-env-secret-3333"
URL_KEY = "sk-url-secret-1111"
QUERY_KEY = "q-secret-2222"
SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://user:pass-word-1@api.example.com/v1", "https://***@api.example.com/v1"),
        ("https://sk-only-key-99@api.example.com:8443/v1", "https://***@api.example.com:8443/v1"),
        ("https://api.example.com/v1?key=abc123456", "https://api.example.com/v1?key=***"),
        ("http://[::1]:8000/v1?api_key=x&b=2", "http://[::1]:8000/v1?api_key=***&b=***"),
        ("http://127.0.0.1:11434/v1", "http://127.0.0.1:11434/v1"),
    ],
)
def test_redact_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_mask_blanks_registered_secrets_and_any_url_credentials() -> None:
    register_url("https://user:pw-abcdef-7@host.example/v1?token=tok-123456")
    register_secret("sk-registered-4444")
    text = mask(
        "key sk-registered-4444, url https://user:pw-abcdef-7@host.example/v1?token=tok-123456, "
        "other https://a:b@elsewhere.example/x?api_key=zzz"
    )
    for secret in ("sk-registered-4444", "pw-abcdef-7", "tok-123456", "a:b@", "zzz"):
        assert secret not in text, text


def test_log_records_are_masked(caplog) -> None:
    register_secret("sk-logged-5555")
    with caplog.at_level(logging.WARNING):
        logging.getLogger("foretab.test").warning("the key is %s", "sk-logged-5555")
        try:
            raise RuntimeError("boom sk-logged-5555")
        except RuntimeError:
            logging.getLogger("foretab.test").exception("failed")
    assert "sk-logged-5555" not in caplog.text
    assert "***" in caplog.text


@pytest.fixture
def echoing_server():
    server = FakeOpenAIServer()
    # A server that refuses the key and quotes it back, as hosted APIs do.
    server.respond_with(
        lambda body: Scripted(
            status=401,
            body={"error": {"message": f"Incorrect API key provided: {ENV_KEY} / {URL_KEY}"}},
        )
    )
    yield server
    server.close()


def _tableqa(tmp_path: Path, url: str) -> subprocess.CompletedProcess[str]:
    table = tmp_path / "t.csv"
    table.write_text("a,b\n1,x\n2,y\n")
    env = {**os.environ, "FORETAB_LLM_API_KEY": ENV_KEY, "PYTHONPATH": str(SRC)}
    command = [sys.executable, "-m", "foretab", "tableqa", "How many rows?", "--table",
               str(table), "--llm-base-url", url, "--llm-model", "fake-model", "--json"]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.slow_variant("userinfo")  # a CLI process each (~2 s of CPU); "query" stays fast
@pytest.mark.parametrize("kind", ["userinfo", "query"])
def test_cli_errors_never_show_the_key(echoing_server, tmp_path, kind) -> None:
    port = echoing_server.port
    url = (
        f"http://user:{URL_KEY}@127.0.0.1:{port}/v1"
        if kind == "userinfo"
        else f"http://127.0.0.1:{port}/v1?key={QUERY_KEY}"
    )
    done = _tableqa(tmp_path, url)
    assert done.returncode == 2, done.stderr
    output = done.stdout + done.stderr
    assert "LLM server http://" in output  # the error is there, with the URL redacted
    for secret in (ENV_KEY, URL_KEY, QUERY_KEY):
        assert secret not in output, output
