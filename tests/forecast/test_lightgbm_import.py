"""A predict-only process imports LightGBM without scikit-learn and pandas (cold start).

In-process, with a stand-in ``lightgbm`` package that records what it could import;
the real import is the slow test in ``tests/parse/test_entity_file.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from foretab.forecast import lightgbm_import

STAND_IN = """
try:
    import pandas
    PANDAS = True
except ImportError:
    PANDAS = False
try:
    import sklearn
    SKLEARN = True
except ImportError:
    SKLEARN = False
"""


@pytest.fixture
def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "lightgbm").mkdir()
    (tmp_path / "lightgbm" / "__init__.py").write_text(STAND_IN)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("lightgbm", "sklearn", "pandas"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setattr(lightgbm_import, "_predict_only", True)


def test_lightgbm_is_imported_without_pandas_and_scikit_learn(stand_in: None) -> None:
    lightgbm_import.import_for_prediction()
    imported = sys.modules["lightgbm"]
    assert (imported.PANDAS, imported.SKLEARN) == (False, False)
    # Both stay importable for the rest of the process.
    assert "pandas" not in sys.modules
    assert "sklearn" not in sys.modules


def test_a_pandas_imported_already_is_lightgbms(
    stand_in: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pandas", object())
    lightgbm_import.import_for_prediction()
    assert sys.modules["lightgbm"].PANDAS is True
