"""``foretab chat`` as a person uses it: typed into a terminal (pexpect), the screen read back."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect", reason="the [dev] extra's pexpect drives the terminal")

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.mark.slow  # a real terminal session: ~3 s of process start and answers
def test_a_thread_with_a_clarify_at_the_terminal(mini_duckdb: str, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
        "TERM": "xterm",
        "PROMPT_TOOLKIT_NO_CPR": "1",  # pexpect answers no cursor-position requests
        "COLUMNS": "200",
    }
    history = tmp_path / "history.txt"
    child = pexpect.spawn(
        sys.executable,
        [
            "-m",
            "foretab",
            "chat",
            "--db",
            mini_duckdb,
            "--future",
            "oracle",
            "--history",
            str(history),
        ],
        env=env,
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 200),
    )
    try:
        child.expect("foretab>")
        child.sendline("What was the price of Bund Garden in Huangpu, Shanghai in December 2021?")
        child.expect(r"answer: \[\[59365\.31\]\]")
        child.expect("foretab>")
        child.sendline("and in 2020?")
        child.expect(
            r"asked: The mean price of Bund Garden \(Huangpu District, Shanghai\) from January 2020 to December 2020\?"
        )
        child.expect(r"answer: \[\[64527\.45\]\]")
        child.expect("foretab>")
        child.sendline("What was the price of Poly Garden in December 2021?")
        child.expect(r"'Poly Garden' is 2 projects")
        child.expect(r"1\. What was the price of Poly Garden in Huangpu District, Guangzhou")
        child.expect(r"2\. What was the price of Poly Garden in Huangpu District, Shanghai")
        child.expect("foretab>")
        child.sendline("2")
        child.expect(
            r"asked: The price of Poly Garden \(Huangpu District, Shanghai\) in December 2021\?"
        )
        child.expect("foretab>")
        child.sendline("and the weather?")
        child.expect(r"Error: the follow-up's 'weather'")
        child.expect("foretab>")
        # line editing: the up arrow recalls the last line, edited before it is sent
        child.send("\x1b[A")  # up: "and the weather?"
        child.send("\x7f" * len("weather?"))
        child.sendline("lowest instead")
        child.expect(r"Error: 'lowest' has nothing to choose from")
        child.expect("foretab>")
        child.sendline("/quit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, child.before
    assert "and in 2020?" in history.read_text(encoding="utf-8")
