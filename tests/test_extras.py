"""The base install: every command registers, and the question engine imports, without any
extra's package; a command that needs an extra names it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from foretab.extras import MissingExtraError, require

#: the packages of the [serve], [llm], [bench] and [neural] extras
EXTRA_PACKAGES = (
    "fastapi", "starlette", "uvicorn", "openai", "sklearn", "matplotlib", "httpx", "torch",
    "neuralforecast",
)  # fmt: skip

PROGRAM = f"""
import sys
for name in {EXTRA_PACKAGES!r}:
    sys.modules[name] = None  # an import of it raises ImportError
from foretab.cli.main import register_commands
register_commands()
from foretab import Engine
from foretab.tableqa.sandbox import run_code
print("ok")
"""


def test_commands_and_engine_import_without_the_extras() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_a_missing_extra_is_named() -> None:
    with pytest.raises(MissingExtraError, match=r"pip install 'foretab\[serve\]'"):
        require("foretab_no_such_module", "serve")
    require("json", "serve")  # installed: nothing happens
