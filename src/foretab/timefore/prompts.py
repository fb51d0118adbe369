"""The paper's Appendix E prompts (package data ``prompts/*.txt``), filled for one store.

Templates use ``$name`` placeholders (``string.Template``) so the JSON and Python literals
inside them need no escaping. Dates follow the store's reference month R: "current date"
is R's last day, the history the forecaster reads is R-23..R, the forecast R+1..R+12.
"""

from __future__ import annotations

import calendar
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from string import Template

from foretab.analyze.answer import current_value
from foretab.core.months import Month
from foretab.core.plan import EntityRef, Plan
from foretab.core.series import Forecast, History
from foretab.llm.untrusted import DATA_RULE, data_block
from foretab.timefore.examples import Example

LOOKBACK = 24
HORIZON = 12


@cache
def template(name: str) -> Template:
    """The prompt file ``prompts/NAME.txt``."""
    text = resources.files("foretab.timefore").joinpath(f"prompts/{name}.txt").read_text("utf-8")
    return Template(text)


def dates(reference: Month) -> dict[str, str]:
    """The date placeholders every prompt may use."""
    last_day = calendar.monthrange(reference.year, reference.month)[1]
    first = reference - (LOOKBACK - 1)
    return {
        "current_date": f"{reference.iso}-{last_day:02d}",
        "current_date_long": f"{calendar.month_name[reference.month]} {last_day}, {reference.year}",
        "current_month": reference.label,
        "first_month": first.label,
        "last_month": reference.label,
        "history_span": f"from {first.label} to {reference.label}",
        "future_span": f"{(reference + 1).label} to {(reference + HORIZON).label}",
    }


def render(name: str, reference: Month, **values: str) -> str:
    """Prompt file ``name`` with the dates of ``reference`` and ``values`` filled in.

    Rows, names and captions from the store arrive as ``<data>`` blocks; the prompt says
    first that they are never instructions.
    """
    return f"{DATA_RULE}\n\n" + template(name).substitute(dates(reference), **values)


def _num(value: float) -> float:
    return round(float(value), 2)


def series_rows(
    series: Mapping[EntityRef, Mapping[Month, float]], refs: Sequence[EntityRef]
) -> str:
    """``[['January 2021', 123.4], ...]``, with the project name first for several projects."""
    many = len(refs) > 1
    rows: list[list[object]] = []
    for ref in refs:
        for month in sorted(series.get(ref, {})):
            value = _num(series[ref][month])
            rows.append([ref.name, month.label, value] if many else [month.label, value])
    return data_block(repr(rows))  # project names are the store's: data, not instructions


def history_rows(history: History | None, refs: Sequence[EntityRef]) -> str:
    """The history as the prompts show it."""
    return series_rows(history.series if history else {}, refs)


def future_rows(forecast: Forecast | None, refs: Sequence[EntityRef]) -> str:
    """The forecast (point values) as the prompts show it."""
    return series_rows(forecast.values() if forecast else {}, refs)


def current_rows(plan: Plan, history: History, refs: Sequence[EntityRef]) -> str:
    """The current price of each project (R, else its latest month before R)."""
    many = len(refs) > 1
    rows: list[list[object]] = []
    for ref in refs:
        observed = history[ref]
        before = [m for m in observed if m <= plan.reference_month]
        if not before:
            continue
        month = max(before)
        value = _num(current_value(plan, ref, history.series))
        rows.append([ref.name, month.label, value] if many else [month.label, value])
    return data_block(repr(rows))


def numbered(blocks: Sequence[str]) -> str:
    """Example blocks under the paper's ``###Example N###`` headers."""
    return "\n".join(
        f"############Example {i}##############\n{block}" for i, block in enumerate(blocks, 1)
    )


def summary_examples(examples: Sequence[Example]) -> str:
    """The caption-summary prompt's examples."""
    return numbered([f"<Query>:{e.question}\n<Summary>:{list(e.captions)!r}" for e in examples])


def sql_examples(examples: Sequence[Example]) -> str:
    """The SQL prompt's examples: question, table names, gold SQL."""
    return numbered(
        [
            f"<Query>:{e.question}\n<Table Caption>:{data_block(repr(list(e.tables)))},\n"
            f"<SQL>:{' '.join(e.sql.split())}"
            for e in examples
        ]
    )
