"""Importing LightGBM without scikit-learn or pandas in a process that only answers questions.

``import lightgbm`` imports scikit-learn too when it is installed (for LightGBM's
scikit-learn and Dask estimators): about 1.4 of the 1.6 s LightGBM takes to import, the
largest part of a ``foretab ask`` cold start; and pandas (for data frames as training
data and the categorical columns they carry), 0.3 to 0.5 s more. Answering a question
only predicts with a saved ``Booster`` from numpy rows, which needs neither.
``foretab ask`` (the console command, not the library) declares its process
predict-only; the first model load then imports LightGBM with both hidden, so LightGBM's
scikit-learn and Dask estimators and its pandas inputs are off for that process only.
Training (``foretab train``, ``--cluster``) and every library caller import LightGBM as
usual; scikit-learn and pandas themselves stay importable (the TimeFore analyzer uses
scikit-learn).
"""

from __future__ import annotations

import sys

_predict_only = False


def predict_only_process() -> None:
    """Declare that this process answers questions and never trains (console commands only)."""
    global _predict_only
    _predict_only = True


#: What a predict-only process imports LightGBM without (those not imported already).
HIDDEN = ("sklearn", "pandas")


def import_for_prediction() -> None:
    """Import LightGBM, without scikit-learn and pandas if this process is predict-only.

    Does nothing when LightGBM (or scikit-learn) is already imported, or the process was
    not declared predict-only: then LightGBM imports as it always does. pandas, when a
    caller imported it already, is LightGBM's as usual.
    """
    if not _predict_only or "lightgbm" in sys.modules or "sklearn" in sys.modules:
        return
    hidden = [name for name in HIDDEN if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # `import NAME` raises ImportError
    try:
        import lightgbm  # noqa: F401
    except ImportError:
        pass  # a LightGBM that cannot do without them: imported as usual by the caller
    finally:
        for name in hidden:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]
