"""`foretab ask` must start fast (cold ≤ 2 s): the CLI may not import the heavy libraries."""

from __future__ import annotations

import subprocess
import sys

HEAVY = (
    "lightgbm",
    "torch",
    "statsforecast",
    "neuralforecast",
    "sklearn",
    "matplotlib",
    "pandas",
    "bm25s",  # the caption index is built on the first caption not in the catalog as written
    "scipy",
)


def test_cli_registration_imports_no_heavy_library() -> None:
    code = (
        "import sys, foretab.cli.main as m; m.register_commands(); "
        "import foretab.engine.build, foretab.engine.context; "
        f"print(','.join(k for k in {HEAVY!r} if k in sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip() == "", f"imported at CLI start-up: {loaded.stdout.strip()}"
