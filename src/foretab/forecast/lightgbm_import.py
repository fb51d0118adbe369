"""Importing LightGBM without scikit-learn in a process that only answers questions.

``import lightgbm`` imports scikit-learn too when it is installed (for LightGBM's
scikit-learn and Dask estimators): about 1.4 of the 1.6 s LightGBM takes to import, the
largest part of a ``foretab ask`` cold start. Answering a question only predicts with a
saved ``Booster``, which needs none of it. ``foretab ask`` (the console command, not the
library) declares its process predict-only; the first model load then imports LightGBM
with scikit-learn hidden, so LightGBM's scikit-learn and Dask estimators are off for that
process only. Training (``foretab train``, ``--cluster``) and every library caller import
LightGBM as usual; scikit-learn itself stays importable (the TimeFore analyzer uses it).
"""

from __future__ import annotations

import sys

_predict_only = False


def predict_only_process() -> None:
    """Declare that this process answers questions and never trains (console commands only)."""
    global _predict_only
    _predict_only = True


def import_for_prediction() -> None:
    """Import LightGBM, without scikit-learn if this process is predict-only.

    Does nothing when LightGBM (or scikit-learn) is already imported, or the process was
    not declared predict-only: then LightGBM imports as it always does.
    """
    if not _predict_only or "lightgbm" in sys.modules or "sklearn" in sys.modules:
        return
    sys.modules["sklearn"] = None  # type: ignore[assignment]  # `import sklearn` raises ImportError
    try:
        import lightgbm  # noqa: F401
    except ImportError:
        pass  # a LightGBM that cannot do without it: imported as usual by the caller
    finally:
        if "sklearn" in sys.modules and sys.modules["sklearn"] is None:
            del sys.modules["sklearn"]
