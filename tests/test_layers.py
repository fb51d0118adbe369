"""The layers (STYLE.md): library packages never import ``cli/`` or ``bench/``.

The contracts are import-linter's (``[tool.importlinter]`` in ``pyproject.toml``); grimp
reads every import, a function's lazy ones included. The planted tests show that the
contracts can fail: a copy of the package with one forbidden import is refused.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import foretab

REPO = Path(__file__).resolve().parents[1]
PACKAGE = Path(foretab.__file__).resolve().parent
# The two layers above the library; everything else under foretab/ is library.
UPPER = {"cli", "bench"}


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` over the package under ``root/src`` with the repo's contracts."""
    return subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()",
         "--config", str(REPO / "pyproject.toml"), "--no-cache"],
        cwd=root, env={"PYTHONPATH": str(root / "src"), "PATH": ""},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def _contracts() -> list[dict]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return config["tool"]["importlinter"]["contracts"]


def test_the_library_never_imports_the_cli_or_the_benchmarks() -> None:
    run = _lint(REPO)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout


def test_every_library_package_is_under_the_contract() -> None:
    guarded = {m.removeprefix("foretab.") for m in _contracts()[0]["source_modules"]}
    present = {
        p.stem if p.is_file() else p.name
        for p in PACKAGE.iterdir()
        if (p.is_dir() and (p / "__init__.py").exists())
        or (p.suffix == ".py" and not p.name.startswith("__"))
    }
    assert present - UPPER == guarded, "a new package must be added to [tool.importlinter]"


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("layers")
    shutil.copytree(PACKAGE, root / "src" / "foretab", ignore=shutil.ignore_patterns("__pycache__"))
    return root


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("parse/planted.py", "from foretab.cli.common import exit_on_error\n"),
        ("engine/planted.py", "def later():\n    import foretab.bench.qa.evaluate\n"),
        ("bench/planted.py", "from foretab.cli import main\n"),
    ],
)
def test_a_planted_import_breaks_the_contract(copy: Path, module: str, source: str) -> None:
    planted = copy / "src" / "foretab" / module
    planted.write_text(source, encoding="utf-8")
    try:
        run = _lint(copy)
    finally:
        planted.unlink()
    assert run.returncode != 0
    assert "BROKEN" in run.stdout and f"foretab.{module[:-3].replace('/', '.')}" in run.stdout


def _private_imports(root: Path) -> list[str]:
    """``from foretab.x import _name`` anywhere under ``root``: a private name crossing modules."""
    import ast

    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("foretab"):
                found += [
                    f"{path.relative_to(root)}:{node.lineno} imports {a.name} from {node.module}"
                    for a in node.names
                    if a.name.startswith("_")
                ]
    return found


def test_no_library_module_imports_another_ones_private_name() -> None:
    assert _private_imports(PACKAGE) == []


def test_a_planted_private_import_is_found(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("from foretab.parse.parser import _hidden\n", encoding="utf-8")
    assert _private_imports(tmp_path) == ["m.py:1 imports _hidden from foretab.parse.parser"]
