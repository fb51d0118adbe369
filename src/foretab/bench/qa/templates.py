"""The ODTQA-FoRe question templates of foretab's QA benchmark (paper §3.2, appendix A.2).

Each template fixes one question family of docs/design.md §4 — task, aggregate, comparison, change
measure, one or several projects, and which kind of time expression it takes — and carries
several surface phrasings, so that no single wording dominates the dataset (the paper gets
the same effect by LLM rewriting; ours are written by hand and rendered deterministically).

Families (36 templates):

* forecasting, one project: a month's value, the mean / max / min over a window, each month
  of a window (5);
* forecasting, 2–3 projects in one district: the same five (5);
* reasoning, one project vs its current price: month value, window mean, max, min (4);
* reasoning, several projects: which rise / which fall (month value, window mean; 4),
  rises most / falls most by absolute change (value, mean; 4) and by percentage change
  (value, mean; 4), highest / lowest (value, mean; 4);
* history, one project: a past month's value and a past window's mean (2);
* issue 10: units sold over a past window, the change during a past window, and the
  absolute / percentage change of a future month vs current (4). The other issue-10
  families (scope, threshold, which month, units, change; English and Chinese) are in
  ``foretab.bench.qa.family_templates`` and are appended after these templates' items.

Placeholders in phrasings: ``{p}`` one project with its district and city, ``{ps}`` several
projects joined with "and", ``{ps_or}`` joined with "or", ``{when}`` the time expression as
an adverbial ("next month", "in March 2022", "over the next three months") and ``{When}``
the same, capitalised, at the start of a sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from foretab.core.plan import (
    Aggregate,
    ChangeMeasure,
    Comparison,
    Extreme,
    Metric,
    Task,
    default_wording,
)


class WindowKind(StrEnum):
    """Which time expressions a template accepts."""

    FUTURE_MONTH = "future_month"  # one month after R
    FUTURE_SPAN = "future_span"  # two or more months after R
    PAST_MONTH = "past_month"  # one month at or before R
    PAST_SPAN = "past_span"


@dataclass(frozen=True, slots=True)
class Template:
    """One seed template: the family it asks about and its phrasings."""

    template_id: str
    description: str
    task: Task
    aggregate: Aggregate
    window: WindowKind
    multi: bool
    phrasings: tuple[str, ...]
    comparison: Comparison = Comparison.NONE
    measure: ChangeMeasure = ChangeMeasure.ABSOLUTE
    metric: Metric = Metric.VALUE
    change: ChangeMeasure | None = None  # a numeric change (docs/design.md §4)
    which_month: Extreme | None = None

    def to_dict(self) -> dict[str, object]:
        """The manifest entry."""
        return {
            "template_id": self.template_id,
            "description": self.description,
            "task": self.task.value,
            "aggregate": self.aggregate.value,
            "comparison": self.comparison.value,
            "measure": self.measure.value,
            "metric": default_wording().metric_name(self.metric),
            "change": self.change.value if self.change else None,
            "which_month": self.which_month.value if self.which_month else None,
            "window": self.window.value,
            "projects": "2-3 in one district" if self.multi else "1",
            "phrasings": list(self.phrasings),
        }


F, R, H = Task.FORECAST, Task.REASONING, Task.HISTORY
VAL, MEAN, MAX, MIN, EACH = (
    Aggregate.VALUE,
    Aggregate.MEAN,
    Aggregate.MAX,
    Aggregate.MIN,
    Aggregate.EACH,
)
FM, FS, PM, PS = (
    WindowKind.FUTURE_MONTH,
    WindowKind.FUTURE_SPAN,
    WindowKind.PAST_MONTH,
    WindowKind.PAST_SPAN,
)
REL = ChangeMeasure.RELATIVE

TEMPLATES: tuple[Template, ...] = (
    # ---- forecasting, one project -------------------------------------------------------
    Template(
        "F01",
        "one project, one future month",
        F,
        VAL,
        FM,
        False,
        (
            "What will the average price of {p} be {when}?",
            "Could you estimate the average price at {p} {when}?",
            "{When}, what is the average price of {p} likely to be?",
            "Please forecast the average price for {p} {when}.",
        ),
    ),
    Template(
        "F02",
        "one project, mean over a future window",
        F,
        MEAN,
        FS,
        False,
        (
            "What will the average of the monthly average prices of {p} be {when}?",
            "Please predict the mean monthly average price for {p} {when}.",
            "{When}, what will the average price of {p} be on average across those months?",
            "For {p}, estimate the mean of its monthly average prices {when}.",
        ),
    ),
    Template(
        "F03",
        "one project, maximum over a future window",
        F,
        MAX,
        FS,
        False,
        (
            "What will the highest average price of {p} be {when}?",
            "{When}, how high will the highest monthly average price of {p} reach?",
            "Forecast the maximum monthly average price of {p} {when}.",
            "What is the peak average price {p} is expected to hit {when}?",
        ),
    ),
    Template(
        "F04",
        "one project, minimum over a future window",
        F,
        MIN,
        FS,
        False,
        (
            "What will the lowest average price of {p} be {when}?",
            "{When}, how low will the lowest monthly average price of {p} go?",
            "Forecast the minimum monthly average price of {p} {when}.",
            "What is the lowest monthly average price {p} is expected to see {when}?",
        ),
    ),
    Template(
        "F05",
        "one project, each month of a future window",
        F,
        EACH,
        FS,
        False,
        (
            "What will the average price of {p} be in each month {when}?",
            "List the forecast monthly average prices of {p} month by month {when}.",
            "{When}, what will the average price of {p} be for every month?",
            "Give me the predicted average price of {p} for each month {when}.",
        ),
    ),
    # ---- forecasting, several projects ---------------------------------------------------
    Template(
        "F06",
        "several projects, one future month",
        F,
        VAL,
        FM,
        True,
        (
            "What will the average prices of {ps} be {when}?",
            "Estimate the average price of each of {ps} {when}.",
            "{When}, what will the average prices be for {ps}?",
            "Please forecast the average prices of {ps} {when}.",
        ),
    ),
    Template(
        "F07",
        "several projects, mean over a future window",
        F,
        MEAN,
        FS,
        True,
        (
            "What will the average of the monthly average prices be for each of {ps} {when}?",
            "Predict the mean monthly average price of each of {ps} {when}.",
            "{When}, what will the mean monthly average prices of {ps} be?",
            "Estimate, for each of {ps}, the mean of its monthly average prices {when}.",
        ),
    ),
    Template(
        "F08",
        "several projects, maximum over a future window",
        F,
        MAX,
        FS,
        True,
        (
            "What will the highest monthly average price of each of {ps} be {when}?",
            "{When}, how high will the highest monthly average prices of {ps} reach?",
            "Forecast the maximum monthly average price for each of {ps} {when}.",
            "What peak average price will each of {ps} reach {when}?",
        ),
    ),
    Template(
        "F09",
        "several projects, minimum over a future window",
        F,
        MIN,
        FS,
        True,
        (
            "What will the lowest monthly average price of each of {ps} be {when}?",
            "{When}, how low will the lowest monthly average prices of {ps} go?",
            "Forecast the minimum monthly average price for each of {ps} {when}.",
            "What is the lowest monthly average price each of {ps} will see {when}?",
        ),
    ),
    Template(
        "F10",
        "several projects, each month of a future window",
        F,
        EACH,
        FS,
        True,
        (
            "What will the average prices of {ps} be in each month {when}?",
            "List the forecast monthly average prices of {ps} month by month {when}.",
            "{When}, what will the average price be for every month for each of {ps}?",
            "Give me the predicted average prices of {ps} for each month {when}.",
        ),
    ),
    # ---- reasoning, one project vs current ---------------------------------------------
    Template(
        "R01",
        "one project, month value vs current",
        R,
        VAL,
        FM,
        False,
        (
            "Will the average price of {p} {when} be higher or lower than its current price?",
            "Compared with the current average price, will the average price of {p} rise or fall {when}?",
            "What about the average price of {p} {when}? Will it increase or decrease from the current price?",
            "{When}, will the average price of {p} go up or down compared with now?",
        ),
        Comparison.VS_CURRENT,
    ),
    Template(
        "R02",
        "one project, window mean vs current",
        R,
        MEAN,
        FS,
        False,
        (
            "Will the average of the monthly average prices of {p} {when} be higher or lower than its current price?",
            "Compared with the current average price, will the mean monthly average price of {p} {when} rise or fall?",
            "{When}, will the average price of {p}, averaged over those months, be above or below its current price?",
            "Taking the mean of the monthly average prices of {p} {when}, will it increase or decrease compared with now?",
        ),
        Comparison.VS_CURRENT,
    ),
    Template(
        "R03",
        "one project, window maximum vs current",
        R,
        MAX,
        FS,
        False,
        (
            "Will the highest monthly average price of {p} {when} be higher or lower than its current price?",
            "Compared with the current average price, will the peak average price of {p} {when} rise or fall?",
            "{When}, will the maximum monthly average price of {p} be above or below its current price?",
            "Forecast the highest average price of {p} {when}: will it increase or decrease compared with now?",
        ),
        Comparison.VS_CURRENT,
    ),
    Template(
        "R04",
        "one project, window minimum vs current",
        R,
        MIN,
        FS,
        False,
        (
            "Will the lowest monthly average price of {p} {when} be higher or lower than its current price?",
            "Compared with the current average price, will the minimum average price of {p} {when} rise or fall?",
            "{When}, will the lowest monthly average price of {p} be above or below its current price?",
            "Please forecast the lowest average price of {p} {when} and say whether it will increase or decrease compared with the current average price.",
        ),
        Comparison.VS_CURRENT,
    ),
    # ---- reasoning, several projects: which rise / fall -------------------------------
    Template(
        "R05",
        "several projects, which rise (month value vs current)",
        R,
        VAL,
        FM,
        True,
        (
            "Which of {ps_or} will see its average price rise {when} compared with its current price?",
            "{When}, which of {ps} will have a higher average price than now?",
            "Among {ps}, which will have an average price {when} above its current price?",
            "Which of {ps_or} will increase in average price {when} relative to the current price?",
        ),
        Comparison.WHICH_RISE,
    ),
    Template(
        "R06",
        "several projects, which rise (window mean vs current)",
        R,
        MEAN,
        FS,
        True,
        (
            "Which of {ps_or} will have a mean monthly average price {when} above its current price?",
            "{When}, which of {ps} will see the average of their monthly average prices rise above the current price?",
            "Among {ps}, whose average of monthly average prices {when} will be higher than its current price?",
            "Comparing the mean monthly average price {when} with the current price, which of {ps_or} will increase?",
        ),
        Comparison.WHICH_RISE,
    ),
    Template(
        "R07",
        "several projects, which fall (month value vs current)",
        R,
        VAL,
        FM,
        True,
        (
            "Which of {ps_or} will see its average price fall {when} compared with its current price?",
            "{When}, which of {ps} will have a lower average price than now?",
            "Among {ps}, which will have an average price {when} below its current price?",
            "Which of {ps_or} will decrease in average price {when} relative to the current price?",
        ),
        Comparison.WHICH_FALL,
    ),
    Template(
        "R08",
        "several projects, which fall (window mean vs current)",
        R,
        MEAN,
        FS,
        True,
        (
            "Which of {ps_or} will have a mean monthly average price {when} below its current price?",
            "{When}, which of {ps} will see the average of their monthly average prices fall below the current price?",
            "Among {ps}, whose average of monthly average prices {when} will be lower than its current price?",
            "Comparing the mean monthly average price {when} with the current price, which of {ps_or} will decrease?",
        ),
        Comparison.WHICH_FALL,
    ),
    # ---- reasoning, several projects: rises most / falls most --------------------------
    Template(
        "R09",
        "several projects, biggest rise (month value vs current)",
        R,
        VAL,
        FM,
        True,
        (
            "Which of {ps_or} will see the biggest increase in average price {when} compared with its current price?",
            "{When}, which of {ps} will have the largest rise in average price over its current price?",
            "Among {ps}, which will gain the most in average price {when} relative to now?",
            "Which will have a bigger increase in average price {when}: {ps_or}?",
        ),
        Comparison.RISES_MOST,
    ),
    Template(
        "R10",
        "several projects, biggest rise (window mean vs current)",
        R,
        MEAN,
        FS,
        True,
        (
            "Which of {ps_or} will see the biggest increase in its mean monthly average price {when} compared with its current price?",
            "{When}, which of {ps} will have the largest rise in the average of its monthly average prices over the current price?",
            "Among {ps}, which will gain the most when its mean monthly average price {when} is compared with the current price?",
            "Comparing the average of the monthly average prices {when} with the current price, which of {ps_or} will increase the most?",
        ),
        Comparison.RISES_MOST,
    ),
    Template(
        "R11",
        "several projects, biggest percentage rise (month value vs current)",
        R,
        VAL,
        FM,
        True,
        (
            "Which of {ps_or} will see the largest percentage increase in average price {when} compared with its current price?",
            "{When}, which of {ps} will have the highest growth rate in average price relative to now?",
            "Among {ps}, which will rise the most in percentage terms in average price {when}?",
            "In terms of percentage change from the current price, which of {ps_or} will increase the most {when}?",
        ),
        Comparison.RISES_MOST,
        REL,
    ),
    Template(
        "R12",
        "several projects, biggest percentage rise (window mean vs current)",
        R,
        MEAN,
        FS,
        True,
        (
            "Which of {ps_or} will see the largest percentage increase in its mean monthly average price {when} compared with its current price?",
            "{When}, which of {ps} will have the highest growth rate when the average of its monthly average prices is compared with now?",
            "Among {ps}, which will rise the most in percentage terms, comparing its mean monthly average price {when} with the current price?",
            "In terms of percentage change from the current price, which of {ps_or} will have the biggest rise in mean monthly average price {when}?",
        ),
        Comparison.RISES_MOST,
        REL,
    ),
    Template(
        "R13",
        "several projects, biggest fall (month value vs current)",
        R,
        VAL,
        FM,
        True,
        (
            "Which of {ps_or} will see the biggest decrease in average price {when} compared with its current price?",
            "{When}, which of {ps} will have the largest drop in average price from its current price?",
            "Among {ps}, which will lose the most in average price {when} relative to now?",
            "Which will have a bigger decrease in average price {when}: {ps_or}?",
        ),
        Comparison.FALLS_MOST,
    ),
    Template(
        "R14",
        "several projects, biggest fall (window mean vs current)",
        R,
        MEAN,
        FS,
        True,
        (
            "Which of {ps_or} will see the biggest decrease in its mean monthly average price {when} compared with its current price?",
            "{When}, which of {ps} will have the largest drop in the average of its monthly average prices from the current price?",
            "Among {ps}, which will lose the most when its mean monthly average price {when} is compared with the current price?",
            "Comparing the average of the monthly average prices {when} with the current price, which of {ps_or} will decrease the most?",
        ),
        Comparison.FALLS_MOST,
    ),
    Template(
        "R15",
        "several projects, biggest percentage fall (month value vs current)",
        R,
        VAL,
        FM,
        True,
        (
            "Which of {ps_or} will see the largest percentage decrease in average price {when} compared with its current price?",
            "{When}, which of {ps} will have the steepest rate of decline in average price relative to now?",
            "Among {ps}, which will fall the most in percentage terms in average price {when}?",
            "In terms of percentage change from the current price, which of {ps_or} will decrease the most {when}?",
        ),
        Comparison.FALLS_MOST,
        REL,
    ),
    Template(
        "R16",
        "several projects, biggest percentage fall (window mean vs current)",
        R,
        MEAN,
        FS,
        True,
        (
            "Which of {ps_or} will see the largest percentage decrease in its mean monthly average price {when} compared with its current price?",
            "{When}, which of {ps} will have the steepest rate of decline when the average of its monthly average prices is compared with now?",
            "Among {ps}, which will fall the most in percentage terms, comparing its mean monthly average price {when} with the current price?",
            "In terms of percentage change from the current price, which of {ps_or} will have the biggest drop in mean monthly average price {when}?",
        ),
        Comparison.FALLS_MOST,
        REL,
    ),
    # ---- reasoning, several projects: highest / lowest ---------------------------------
    Template(
        "R17",
        "several projects, highest month value",
        R,
        VAL,
        FM,
        True,
        (
            "Which of {ps_or} will have the highest average price {when}?",
            "{When}, which of {ps} will be the most expensive by average price?",
            "Among {ps}, which will have the highest average price {when}?",
            "Which will be pricier on average {when}: {ps_or}?",
        ),
        Comparison.HIGHEST,
    ),
    Template(
        "R18",
        "several projects, highest window mean",
        R,
        MEAN,
        FS,
        True,
        (
            "Which of {ps_or} will have the highest mean monthly average price {when}?",
            "{When}, which of {ps} will have the highest average of monthly average prices?",
            "Among {ps}, which will be the most expensive on average across the months {when}?",
            "Averaging the monthly average prices {when}, which of {ps_or} will be the highest?",
        ),
        Comparison.HIGHEST,
    ),
    Template(
        "R19",
        "several projects, lowest month value",
        R,
        VAL,
        FM,
        True,
        (
            "Which of {ps_or} will have the lowest average price {when}?",
            "{When}, which of {ps} will be the cheapest by average price?",
            "Among {ps}, which will have the lowest average price {when}?",
            "Which will be cheaper on average {when}: {ps_or}?",
        ),
        Comparison.LOWEST,
    ),
    Template(
        "R20",
        "several projects, lowest window mean",
        R,
        MEAN,
        FS,
        True,
        (
            "Which of {ps_or} will have the lowest mean monthly average price {when}?",
            "{When}, which of {ps} will have the lowest average of monthly average prices?",
            "Among {ps}, which will be the cheapest on average across the months {when}?",
            "Averaging the monthly average prices {when}, which of {ps_or} will be the lowest?",
        ),
        Comparison.LOWEST,
    ),
    # ---- history (past months, real values) ----------------------------------------------
    Template(
        "H01",
        "one project, one past month",
        H,
        VAL,
        PM,
        False,
        (
            "What was the average price of {p} {when}?",
            "{When}, what was the average price at {p}?",
            "How much was the average price of {p} {when}?",
        ),
    ),
    Template(
        "H02",
        "one project, mean over a past window",
        H,
        MEAN,
        PS,
        False,
        (
            "What was the average of the monthly average prices of {p} {when}?",
            "{When}, what was the mean monthly average price of {p}?",
            "For {p}, what was the mean of its monthly average prices {when}?",
        ),
    ),
    # issue 10: units, numeric change, which month
    Template(
        "H03",
        "one project, units sold over a past window",
        H,
        Aggregate.SUM,
        PS,
        False,
        (
            "How many units did {p} sell {when}?",
            "{When}, how many homes were sold at {p}?",
            "What were the total units sold at {p} {when}?",
        ),
        metric=Metric.UNITS,
    ),
    Template(
        "H04",
        "one project, change of its price during a past window",
        H,
        MEAN,
        PS,
        False,
        (
            "How much did the price of {p} change {when}?",
            "By how much did the average price of {p} rise or fall {when}?",
        ),
        change=ChangeMeasure.ABSOLUTE,
    ),
    Template(
        "F11",
        "one project, how much a future month's price changes vs current",
        F,
        VAL,
        FM,
        False,
        (
            "How much will the price of {p} rise or fall {when} compared with now?",
            "By how much will the average price of {p} change {when} relative to today?",
        ),
        change=ChangeMeasure.ABSOLUTE,
    ),
    Template(
        "F12",
        "one project, percentage change of a future month vs current",
        F,
        VAL,
        FM,
        False,
        (
            "By what percentage will the price of {p} change {when}?",
            "What is the percentage change in the average price of {p} {when} compared with now?",
        ),
        measure=ChangeMeasure.RELATIVE,
        change=ChangeMeasure.RELATIVE,
    ),
)

TEMPLATES_BY_ID: dict[str, Template] = {t.template_id: t for t in TEMPLATES}

_AS_IS = (
    "from ",
    "between ",
    "by ",
    "in ",
    "at ",
    "during ",
    "over ",
    "within ",
    "through ",
    "for ",
)
_BARE = ("next ", "this ", "last ", "now")
_PLURAL_SPAN = re.compile(r"^(the )?(next|coming|following|past|last|previous)\b.*\bmonths$")


def adverbial(expression: str) -> str:
    """A time expression as it reads after a verb: ``"March 2022"`` → ``"in March 2022"``."""
    text = expression.strip()
    lower = text.lower()
    if lower.startswith(_AS_IS):
        return text
    if _PLURAL_SPAN.match(lower):
        return f"over {text}"
    if lower.startswith(_BARE):
        return text
    return f"in {text}"


def project_phrase(project: str, district: str, city: str, form: int) -> str:
    """One project with its place, in one of three forms (full, short, possessive city).

    A corpus with no outer levels (a stock symbol) names the entity alone.
    """
    if not district and not city:
        return project
    short = district.removesuffix(" District")
    if form == 1 and short != district:
        return f"{project} in {short}, {city}"
    if form == 2:
        return f"{project} in {city}'s {district}"
    return f"{project} in {district}, {city}"


def projects_phrase(
    projects: list[str], district: str, city: str, form: int, conjunction: str
) -> str:
    """``"A, B and C in Jiangning District, Nanjing"``."""
    names = ", ".join(projects[:-1]) + f" {conjunction} " + projects[-1]
    return project_phrase(names, district, city, form)


def render(
    template: Template,
    phrasing: int,
    projects: list[str],
    district: str,
    city: str,
    expression: str,
    form: int,
) -> str:
    """Fill one phrasing of ``template``."""
    when = adverbial(expression)
    text = template.phrasings[phrasing]
    values = {
        "when": when,
        "When": when[0].upper() + when[1:],
        "p": project_phrase(projects[0], district, city, form),
        "ps": projects_phrase(projects, district, city, form, "and"),
        "ps_or": projects_phrase(projects, district, city, form, "or"),
    }
    return text.format(**values)
