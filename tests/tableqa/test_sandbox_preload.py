"""The sandbox child imports up front every module pandas and numpy load on first use.

After the child drops to its own uid it may not read the library files (a virtual
environment in a folder only its owner can read: "No module named 'numpy.rec'"), so
common pandas calls must need no import the child did not do before hardening.
"""

from __future__ import annotations

import subprocess
import sys

PROGRAM = r"""
import sys
from foretab.tableqa.sandbox.child import ALLOWED_MODULES, PRELOADED
for name in ALLOWED_MODULES + PRELOADED:
    __import__(name)
import pyarrow.parquet
import numpy as np
import pandas as pd
before = set(sys.modules)
df = pd.DataFrame({"a": [1, 2, 3, 4], "b": ["x", "y", "x", "z"], "c": [1.5, None, 2.5, 3.0],
                   "d": pd.to_datetime(["2020-01-01", "2020-02-01", "2020-03-01", "2020-04-01"])})
df.describe(); df.describe(include="all"); df.to_records(); pd.DataFrame.from_records([(1, 2)])
df.groupby("b").a.agg(["mean", "sum", "std"]); df.pivot_table(index="b", values="a")
df.a.rolling(2).mean(); df.b.str.contains("x"); df.set_index("d").a.resample("MS").mean()
df.corr(numeric_only=True); df.c.interpolate(); df.merge(df, on="a"); df.to_dict()
df.melt(); df.b.str.split("x", expand=True); df.to_string(); repr(df); pd.crosstab(df.a, df.b)
np.char.upper(np.array(["a"])); np.fft.fft(df.a.to_numpy()); df.d.dt.strftime("%B %Y")
new = sorted(m for m in set(sys.modules) - before if m.split(".")[0] in ("numpy", "pandas"))
print(" ".join(new))
"""


def test_common_pandas_calls_import_nothing_new() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "", f"imported after the child's preload: {done.stdout}"
