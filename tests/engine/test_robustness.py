"""Robustness of the parser to phrasings its author did not write.

`robustness_set.json` was written independently of the parser (before reading its code): polite
requests, inverted clauses, lower case without punctuation, partial or apostrophe-free place
names, possessives, several price words ("cost", "valuation", "per square metre"), every family
of docs/design.md §4, history questions, and unknown/ambiguous entities. Each question must parse to
exactly the expected Plan, or raise exactly the expected error type. Accuracy and every failure
are printed so a regression names its question.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from foretab.core.months import Month, month_range
from foretab.engine import Engine
from foretab.errors import ForetabError

from .test_paraphrases import describe

CASES = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "questions" / "robustness_set.json").read_text()
)
MIN_ACCURACY = 0.95
REFERENCE = "2021-12"


def outcome(engine: Engine, question: str) -> dict[str, object]:
    try:
        return describe(engine, question)
    except ForetabError as exc:
        return {"error": type(exc).__name__, "message": exc.message}


def test_set_is_broad() -> None:
    """The set covers every family, history, and both kinds of entity error."""
    plans = [c for c in CASES if "error" not in c]
    assert len(CASES) >= 100
    assert {c["comparison"] for c in plans} == {
        "none",
        "vs_current",
        "which_rise",
        "which_fall",
        "rises_most",
        "falls_most",
        "highest",
        "lowest",
    }
    assert {c["aggregate"] for c in plans} == {"value", "mean", "max", "min", "each"}
    assert {c["task"] for c in plans} == {"forecast", "reasoning", "history"}
    assert {c["error"] for c in CASES if "error" in c} == {
        "UnknownEntityError",
        "AmbiguousEntityError",
    }
    assert sum(c["question"] == c["question"].lower() for c in CASES) >= 10


@pytest.mark.slow
def test_robustness_set_parses(corpus_db: str) -> None:
    failures = []
    with Engine.open(corpus_db, future="oracle") as engine:
        for case in CASES:
            want = {k: v for k, v in case.items() if k != "question"}
            got = outcome(engine, case["question"])
            if "error" in want:
                ok = got.get("error") == want["error"]
                diff: object = got if not ok else None
            else:
                ok = got == want
                diff = (
                    got
                    if "error" in got
                    else {k: (got.get(k), want[k]) for k in want if got.get(k) != want[k]}
                )
            if not ok:
                failures.append(f"{case['question']}\n    got/want {diff}")
    accuracy = 1 - len(failures) / len(CASES)
    print(f"robustness accuracy {accuracy:.1%} ({len(CASES) - len(failures)}/{len(CASES)})")
    print("\n".join(failures))
    assert accuracy >= MIN_ACCURACY, "\n".join(failures)


def _expected_answer(case: dict, prices: dict) -> list[list[object]]:
    """The docs/design.md §4 answer for the expected plan, from the CSV alone (no engine code)."""
    first, last = Month.parse(case["first"]), Month.parse(case["last"])
    months = [m.iso for m in month_range(first, last)]
    keys = [tuple(p) for p in case["projects"]]
    agg = case["aggregate"]
    series = {k: [prices[k][m] for m in months] for k in keys}
    if agg == "each":
        if len(keys) == 1:
            return [[Month.parse(m).label, v] for m, v in zip(months, series[keys[0]], strict=True)]
        return [
            [k[2], Month.parse(m).label, v]
            for k in keys
            for m, v in zip(months, series[k], strict=True)
        ]
    pick = {"value": lambda v: v[0], "mean": lambda v: sum(v) / len(v), "max": max, "min": min}[agg]
    target = {k: pick(series[k]) for k in keys}
    comparison = case["comparison"]
    if comparison == "none":
        return [[target[keys[0]]]] if len(keys) == 1 else [[k[2], target[k]] for k in keys]
    current = {k: prices[k][REFERENCE] for k in keys}
    change = {
        k: (target[k] - current[k]) / current[k]
        if case["measure"] == "relative"
        else target[k] - current[k]
        for k in keys
    }
    if comparison == "vs_current":
        k = keys[0]
        return [["Increase" if change[k] > 0 else "Decrease" if change[k] < 0 else "No change"]]
    if comparison in ("which_rise", "which_fall"):
        sign = 1 if comparison == "which_rise" else -1
        return [[k[2]] for k in keys if sign * change[k] > 0] or [["None"]]
    if comparison in ("rises_most", "falls_most"):
        sign = 1 if comparison == "rises_most" else -1
        best = max(keys, key=lambda k: sign * change[k])
        return [[best[2]]] if sign * change[best] > 0 else [["None"]]
    best = (max if comparison == "highest" else min)(keys, key=lambda k: target[k])
    return [[best[2]]]


def _same(got: object, want: object) -> bool:
    """Equal, numbers within the rounding of a two-decimal answer."""
    if isinstance(want, float) and isinstance(got, int | float):
        return abs(got - want) <= 0.011
    if isinstance(want, list) and isinstance(got, list):
        return len(got) == len(want) and all(_same(g, w) for g, w in zip(got, want, strict=True))
    return got == want


@pytest.mark.slow
def test_robustness_set_answers(corpus_db: str, corpus_frame: pd.DataFrame) -> None:
    """End to end with ``--future oracle``: each answer equals one computed from the CSV."""
    prices: dict[tuple[str, str, str], dict[str, float]] = {}
    for city, district, project, month, price in corpus_frame[
        ["city", "district", "project", "month", "avg_price"]
    ].itertuples(index=False):
        prices.setdefault((city, district, project), {})[month] = float(price)
    failures = []
    with Engine.open(corpus_db, future="oracle") as engine:
        for case in CASES:
            try:
                got: object = engine.ask(case["question"]).answer
            except ForetabError as exc:
                got = type(exc).__name__
            want = case["error"] if "error" in case else _expected_answer(case, prices)
            if not _same(got, want):
                failures.append(f"{case['question']}\n    got {got}\n    want {want}")
    accuracy = 1 - len(failures) / len(CASES)
    print(f"robustness answer accuracy {accuracy:.1%} ({len(CASES) - len(failures)}/{len(CASES)})")
    print("\n".join(failures))
    assert accuracy >= MIN_ACCURACY, "\n".join(failures)
