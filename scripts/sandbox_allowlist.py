"""Regenerate the sandbox's attribute allowlist (src/foretab/tableqa/sandbox/allowed_attributes.txt).

The list is the public names of the objects a pandas answer works with (frames, series,
indexes, group-bys, accessors, numpy arrays and functions, the allowed standard modules,
Python's own value types), less every name that is I/O, dynamic evaluation or a module.
It is generated once and committed, so a new pandas never widens it silently: review the
diff after regenerating.

    PYTHONPATH=src python scripts/sandbox_allowlist.py
"""

from __future__ import annotations

import bisect
import calendar
import collections
import datetime
import decimal
import difflib
import fractions
import functools
import heapq
import itertools
import json
import math
import numbers
import operator
import random
import re
import statistics
import string
import textwrap
import time
import types
import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd
from dateutil import parser as date_parser
from dateutil import relativedelta

from foretab.tableqa.sandbox.policy import is_denied_attribute

# Submodules that answers use as attributes (np.random.seed, pd.offsets.MonthEnd).
SUBMODULES = frozenset({"numpy.random", "numpy.linalg", "pandas.tseries.offsets"})
OUT = Path(__file__).resolve().parents[1] / "src/foretab/tableqa/sandbox/allowed_attributes.txt"


def objects() -> list[object]:
    """Every type and module whose public names an answer may read."""
    df = pd.DataFrame({"a": [1, 2], "s": ["x", "y"], "t": pd.to_datetime(["2020-01-01"] * 2)})
    s, g = df["a"], df.groupby("s")
    found: list[object] = [
        pd.DataFrame, pd.Series, pd.Index, pd.MultiIndex, pd.DatetimeIndex, pd.RangeIndex,
        pd.CategoricalIndex, pd.PeriodIndex, pd.TimedeltaIndex, pd.IntervalIndex,
        pd.Categorical, pd.Timestamp, pd.Timedelta, pd.Period, pd.Interval, pd.NamedAgg,
        pd.DateOffset, pd.Grouper, type(g), type(s.groupby(df["s"])), type(g.rolling(2)),
        type(s.rolling(2)), type(s.expanding()), type(s.ewm(span=2)),
        type(df.set_index("t").resample("ME")), type(s.str if False else df["s"].str),
        type(df["t"].dt), type(pd.Series(pd.to_timedelta([1], "D")).dt),
        type(df["s"].astype("category").cat), type(df.iloc), type(df.loc), type(df.at),
        type(df.iat), type(df.columns), type(df.dtypes), pd.api.types.CategoricalDtype,
        np.ndarray, np.generic, np.float64, np.int64, np.bool_, np.datetime64, np.dtype,
        np.random.Generator, np.random.RandomState, pd.core.strings.accessor.StringMethods,
        str, bytes, bytearray, list, tuple, dict, set, frozenset, int, float, complex, bool,
        range, slice, type(None), type({}.keys()), type({}.values()), type({}.items()),
        re.Pattern, re.Match, datetime.date, datetime.datetime, datetime.timedelta,
        datetime.time, datetime.timezone, collections.Counter, collections.defaultdict,
        collections.OrderedDict, collections.deque, decimal.Decimal, fractions.Fraction,
        random.Random, relativedelta.relativedelta, functools.partial, BaseException,
        math, re, datetime, collections, statistics, itertools, functools, operator, string,
        decimal, fractions, json, heapq, bisect, random, unicodedata, calendar, time,
        textwrap, difflib, numbers, date_parser, relativedelta, np, np.random, np.linalg,
        pd, pd.offsets,
    ]  # fmt: skip
    return found


def public_names(target: object) -> set[str]:
    """Public names of ``target``, less modules other than ``SUBMODULES``."""
    names = set()
    for name in dir(target):
        if name.startswith("_"):
            continue
        try:
            value = getattr(target, name)
        except Exception:
            names.add(name)
            continue
        if isinstance(value, types.ModuleType) and value.__name__ not in SUBMODULES:
            continue
        names.add(name)
    return names


def main() -> None:
    """Write the list."""
    names: set[str] = set()
    for target in objects():
        names |= public_names(target)
    kept = sorted(name for name in names if not is_denied_attribute(name))
    header = (
        "# Attribute names generated pandas code may read (scripts/sandbox_allowlist.py).\n"
        "# Everything else is refused by the code check and again at run time.\n"
    )
    OUT.write_text(header + "\n".join(kept) + "\n", encoding="utf-8")
    print(f"{len(kept)} names ({len(names) - len(kept)} denied) -> {OUT}")


if __name__ == "__main__":
    main()
