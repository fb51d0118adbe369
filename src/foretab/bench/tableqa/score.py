"""DataBench's official comparison rules (databench_eval 4.x ``Evaluator.default_compare``).

Re-implemented rule for rule, so that scores here match the official scorer:
* null-likes (``None``, ``"nan"``, ``""``, ``"np.nan"``, ``"None"``, after stripping
  brackets, quotes and spaces) equal only each other;
* boolean: true/yes/y vs false/no/n, case-insensitive;
* category: equal after stripping ``[]'" ``, else equal as dates (``pd.to_datetime``);
* number: keep only digits, ``.`` and ``-``, then compare truncated to 2 decimals;
* list[category]: split on ``,``, strip each item, same length, equal as sets (as dates
  when every item parses as one);
* list[number]: split on ``,``, clean each item as a number, truncate to 2 decimals, same
  length, equal as sets.

One deliberate difference: where the official code would crash on an exception it does not
catch (e.g. an overflow inside date parsing), this returns the string comparison instead.
"""

from __future__ import annotations

import math
import warnings

STRIP_CHARS = "[]'\" "
_NULL_STRINGS = frozenset({"nan", "", " ", "np.nan", "None"})
_TRUE = frozenset({"true", "yes", "y"})
_FALSE = frozenset({"false", "no", "n"})
SEMANTICS = ("boolean", "category", "number", "list[category]", "list[number]")


def _is_null(text: str) -> bool:
    return text in _NULL_STRINGS


def _as_date(text: str) -> object:
    import pandas as pd

    with warnings.catch_warnings():
        # "Could not infer format" and friends: the official scorer just prints them.
        warnings.simplefilter("ignore")
        return pd.to_datetime(text).date()


def _clean_number(text: str) -> float:
    return float("".join(ch for ch in text if ch.isdigit() or ch in ".-"))


def compare(value: object, truth: object, semantic: str) -> bool:
    """Whether a response ``value`` matches the gold ``truth`` for answer type ``semantic``."""
    semantic = semantic.strip()
    value_text = str(value).strip(STRIP_CHARS)
    truth_text = str(truth).strip(STRIP_CHARS)
    if _is_null(value_text) and _is_null(truth_text):
        return True
    if _is_null(value_text) or _is_null(truth_text):
        return False
    if semantic == "boolean":
        v, t = value_text.lower(), truth_text.lower()
        return (v in _TRUE and t in _TRUE) or (v in _FALSE and t in _FALSE)
    if semantic == "category":
        if value_text == truth_text:
            return True
        try:
            return bool(_as_date(value_text) == _as_date(truth_text))
        except Exception:
            return value_text == truth_text
    if semantic == "number":
        try:
            v, t = _clean_number(str(value)), _clean_number(str(truth))
            return math.trunc(v * 100) == math.trunc(t * 100)
        except (ValueError, OverflowError):
            return False
    if semantic == "list[category]":
        return _compare_category_lists(str(value), str(truth))
    if semantic == "list[number]":
        return _compare_number_lists(str(value), str(truth))
    raise ValueError(
        f"unknown DataBench answer type {semantic!r}; use one of {', '.join(SEMANTICS)}"
    )


def _category_items(text: str) -> list[str]:
    items = [item.strip(STRIP_CHARS) for item in text.strip("[]").split(",")]
    return ["" if _is_null(item) else item for item in items]


def _compare_category_lists(value: str, truth: str) -> bool:
    values, truths = _category_items(value), _category_items(truth)
    if len(values) != len(truths):
        return False
    try:
        return {_as_date(v) for v in values} == {_as_date(t) for t in truths}
    except Exception:
        return set(values) == set(truths)


def _number_items(text: str) -> list[float]:
    numbers = sorted(
        _clean_number(item.strip()) for item in text.strip("[]").split(",") if item.strip()
    )
    return [int(n * 100) / 100 for n in numbers]


def _compare_number_lists(value: str, truth: str) -> bool:
    try:
        values, truths = _number_items(value), _number_items(truth)
    except (ValueError, OverflowError):
        return False
    return len(values) == len(truths) and set(values) == set(truths)
