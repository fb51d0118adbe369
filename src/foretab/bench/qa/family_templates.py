"""Templates of the issue-10 families for ``foretab bench build``, English and Chinese.

Families (docs/design.md §4): **scope** (a district as a whole: highest / lowest / best-selling
project, top N, a price range, among the top N by units the cheapest, mean price, total
units, how many projects sold), **threshold** (above / below a value → Yes / No),
**which month**, **units sold** in a month, and **numeric change** (percentage, past and
future). Each template has one language; Chinese ones name places and projects by their
Chinese names and take absolute months ("2021年3月", "2021年3月至2021年8月").

The classic ODTQA-FoRe templates (``foretab.bench.qa.templates``) are sampled first with the
builder's own random stream, so their items are byte-identical with or without these; the
families draw from a stream of their own and are appended to each split. A district's
scope questions all fall in one split (districts are split 6:2:2, seeded), project
questions follow the project split.

Placeholders: ``{p}`` a project with its place, ``{d}`` a district with its city, ``{when}``
/ ``{When}`` the time expression, ``{n}`` N, ``{lo}`` / ``{hi}`` a price range, ``{v}`` a
threshold.
"""

from __future__ import annotations

from dataclasses import dataclass

from foretab.bench.qa.templates import WindowKind, adverbial
from foretab.core.months import Month
from foretab.core.plan import (
    Aggregate,
    ChangeMeasure,
    Extreme,
    Language,
    Metric,
    ScopeOp,
    Task,
    default_wording,
)

F, R, H = Task.FORECAST, Task.REASONING, Task.HISTORY
FM, FS, PM, PS = (
    WindowKind.FUTURE_MONTH,
    WindowKind.FUTURE_SPAN,
    WindowKind.PAST_MONTH,
    WindowKind.PAST_SPAN,
)
EN, ZH = Language.EN, Language.ZH
HI, LO = Extreme.HIGHEST, Extreme.LOWEST
UNITS = Metric.UNITS
_ZH_DIGITS = "零一二三四五六七八九十"


@dataclass(frozen=True, slots=True)
class FamilyTemplate:
    """One template of a new family: what it asks and its phrasings (one language)."""

    template_id: str
    family: str  # scope / threshold / which_month / units / change
    description: str
    task: Task
    window: WindowKind
    language: Language
    phrasings: tuple[str, ...]
    op: ScopeOp | None = None  # scope questions
    extreme: Extreme = HI
    metric: Metric = Metric.VALUE
    n: int = 1
    above: bool | None = None  # threshold questions
    which_month: Extreme | None = None
    change: ChangeMeasure | None = None

    @property
    def is_scope(self) -> bool:
        return self.op is not None

    def to_dict(self) -> dict[str, object]:
        """The manifest entry."""
        return {
            "template_id": self.template_id,
            "family": self.family,
            "description": self.description,
            "task": self.task.value,
            "language": self.language.value,
            "window": self.window.value,
            "scope_op": self.op.value if self.op else None,
            "extreme": self.extreme.value,
            "metric": default_wording().metric_name(self.metric),
            "n": self.n,
            "threshold": None if self.above is None else ("above" if self.above else "below"),
            "which_month": self.which_month.value if self.which_month else None,
            "change": self.change.value if self.change else None,
            "phrasings": list(self.phrasings),
        }


def _t(tid: str, family: str, description: str, task: Task, window: WindowKind,
       language: Language, phrasings: tuple[str, ...], **kw: object) -> FamilyTemplate:  # fmt: skip
    return FamilyTemplate(tid, family, description, task, window, language, phrasings, **kw)  # type: ignore[arg-type]


FAMILY_TEMPLATES: tuple[FamilyTemplate, ...] = (
    # ---- scope, English ------------------------------------------------------------------
    _t("S01", "scope", "district: most expensive project in a past month", H, PM, EN, (
        "Which project in {d} had the highest average price {when}?",
        "Which project in {d} was the most expensive {when}?",
    ), op=ScopeOp.PICK, extreme=HI),
    _t("S02", "scope", "district: cheapest project in a future month", F, FM, EN, (
        "Which project in {d} will be the cheapest {when}?",
        "Which project in {d} will have the lowest average price {when}?",
    ), op=ScopeOp.PICK, extreme=LO),
    _t("S03", "scope", "district: best-selling project over a past window", H, PS, EN, (
        "Which project in {d} sold the most units {when}?",
        "Which project in {d} had the most units sold {when}?",
    ), op=ScopeOp.PICK, metric=UNITS),
    _t("S04", "scope", "district: top 3 by price in a past month", H, PM, EN, (
        "What were the top 3 most expensive projects in {d} {when}?",
        "Which were the three most expensive projects in {d} {when}?",
    ), op=ScopeOp.TOP, n=3),
    _t("S05", "scope", "district: 3 cheapest projects in a future month", F, FM, EN, (
        "What will be the 3 cheapest projects in {d} {when}?",
        "Which three projects in {d} will be the cheapest {when}?",
    ), op=ScopeOp.TOP, extreme=LO, n=3),
    _t("S06", "scope", "district: projects in a price range in a past month", H, PM, EN, (
        "Which projects in {d} had an average price between {lo} and {hi} {when}?",
        "Which projects in {d} were priced between {lo} and {hi} {when}?",
    ), op=ScopeOp.FILTER),
    _t("S07", "scope", "district: among the 5 best-selling, the cheapest (past month)", H, PM, EN, (
        "Among the five best-selling projects in {d} {when}, which had the lowest price?",
    ), op=ScopeOp.TOP_THEN_PICK, extreme=LO, n=5),
    _t("S08", "scope", "district: mean price over its projects in a past month", H, PM, EN, (
        "What was the average price in {d} {when}?",
        "What was the mean price of the projects in {d} {when}?",
    ), op=ScopeOp.MEAN),
    _t("S09", "scope", "district: total units sold over a past window", H, PS, EN, (
        "How many units were sold in {d} {when}?",
        "What were the total units sold in {d} {when}?",
    ), op=ScopeOp.TOTAL, metric=UNITS),
    _t("S10", "scope", "district: how many projects had sales in a past month", H, PM, EN, (
        "How many projects in {d} had sales {when}?",
    ), op=ScopeOp.COUNT, metric=UNITS),
    _t("S11", "scope", "district: mean price over its projects in a future month", F, FM, EN, (
        "What will the average price in {d} be {when}?",
    ), op=ScopeOp.MEAN),
    # ---- one project, English -------------------------------------------------------------
    _t("T01", "threshold", "one project: above a value in a future month", R, FM, EN, (
        "Will the price of {p} be above {v} {when}?",
        "Will the average price of {p} exceed {v} {when}?",
    ), above=True),
    _t("T02", "threshold", "one project: below a value in a future month", R, FM, EN, (
        "Will the price of {p} be below {v} {when}?",
    ), above=False),
    _t("W01", "which_month", "one project: most expensive month of a past window", H, PS, EN, (
        "In which month {when} was {p} most expensive?",
        "Which month {when} had the highest price at {p}?",
    ), which_month=HI),
    _t("W02", "which_month", "one project: cheapest month of a future window", F, FS, EN, (
        "In which month {when} will {p} be cheapest?",
    ), which_month=LO),
    _t("U01", "units", "one project: units sold in a past month", H, PM, EN, (
        "How many units did {p} sell {when}?",
        "How many homes were sold at {p} {when}?",
    ), metric=UNITS),
    _t("C01", "change", "one project: percentage change during a past window", H, PS, EN, (
        "By what percentage did the price of {p} change {when}?",
    ), change=ChangeMeasure.RELATIVE),
    # ---- Chinese ---------------------------------------------------------------------------
    _t("Z01", "scope", "district: most expensive project in a past month (zh)", H, PM, ZH, (
        "请问在{when}，{d}哪个小区的房价最高？",
        "{when}{d}房价最高的小区是哪个？",
    ), op=ScopeOp.PICK, extreme=HI),
    _t("Z02", "scope", "district: top 3 by price in a past month (zh)", H, PM, ZH, (
        "请问在{when}，{d}房价排名前三的小区有哪些？",
    ), op=ScopeOp.TOP, n=3),
    _t("Z03", "scope", "district: projects in a price range in a past month (zh)", H, PM, ZH, (
        "请问在{when}，{d}内哪些小区的房价位于{lo}至{hi}元之间？",
    ), op=ScopeOp.FILTER),
    _t("Z04", "scope", "district: mean price in a past month (zh)", H, PM, ZH, (
        "请问{when}{d}的平均房价是多少？",
    ), op=ScopeOp.MEAN),
    _t("Z05", "scope", "district: best-selling project in a past month (zh)", H, PM, ZH, (
        "请问在{when}，{d}哪个小区的销量最高？",
    ), op=ScopeOp.PICK, metric=UNITS),
    _t("Z06", "scope", "district: among the 5 best-selling, the cheapest (zh)", H, PM, ZH, (
        "在{when}，{d}销量排名前五的小区里，哪个小区的平均房价最低？",
    ), op=ScopeOp.TOP_THEN_PICK, extreme=LO, n=5),
    _t("Z07", "threshold", "one project: above a value in a future month (zh)", R, FM, ZH, (
        "{p}{when}的均价会超过{v}吗？",
    ), above=True),
    _t("Z08", "which_month", "one project: most expensive month of a past window (zh)", H, PS, ZH, (
        "{p}{when}哪个月最贵？",
    ), which_month=HI),
    _t("Z09", "units", "one project: units sold in a past month (zh)", H, PM, ZH, (
        "请问{when}，{p}成交了多少套？",
        "{p}{when}成交了多少套？",
    ), metric=UNITS),
    _t("Z10", "change", "one project: percentage change by a future month (zh)", F, FM, ZH, (
        "{p}到{when}的涨幅是多少？",
    ), change=ChangeMeasure.RELATIVE),
)  # fmt: skip

FAMILY_TEMPLATES_BY_ID: dict[str, FamilyTemplate] = {t.template_id: t for t in FAMILY_TEMPLATES}


def aggregate_of(template: FamilyTemplate, months: int) -> Aggregate:
    """The plan aggregate the question implies (units sum, one month's value, else mean)."""
    if template.metric is Metric.UNITS and not template.is_scope:
        return Aggregate.SUM
    return Aggregate.VALUE if months == 1 else Aggregate.MEAN


def zh_when(first: Month, last: Month) -> str:
    """``2021年3月`` or ``2021年3月至2021年8月``."""
    one = f"{first.year}年{first.month}月"
    return one if first == last else f"{one}至{last.year}年{last.month}月"


def zh_number(n: int) -> str:
    """Chinese numerals up to 99 (``五``, ``十二``)."""
    if n <= 10:
        return _ZH_DIGITS[n]
    tens, ones = divmod(n, 10)
    return ("" if tens == 1 else _ZH_DIGITS[tens]) + "十" + (_ZH_DIGITS[ones] if ones else "")


@dataclass(frozen=True, slots=True)
class Place:
    """A district and its city, in English and Chinese (empty: no Chinese name)."""

    outer: str
    inner: str
    outer_zh: str = ""
    inner_zh: str = ""


def place_phrase(place: Place, language: Language, form: int) -> str:
    """``Jiangning, Nanjing`` (three English forms) or ``南京市江宁区``."""
    if language is ZH:
        return place.outer_zh + place.inner_zh
    short = place.inner.removesuffix(" District")
    if form == 1 and short != place.inner:
        return f"{short}, {place.outer}"
    if form == 2:
        return f"{place.outer}'s {place.inner}"
    return f"{place.inner}, {place.outer}"


def money(value: float, language: Language) -> str:
    """A bound as it reads in a question: ``25,000`` (English), ``25000`` (Chinese)."""
    whole = round(value)
    return str(whole) if language is ZH else f"{whole:,}"


def render_family(
    template: FamilyTemplate,
    phrasing: int,
    *,
    expression: str,
    first: Month,
    last: Month,
    place: Place,
    project: str = "",
    project_zh: str = "",
    form: int = 0,
    lo: float | None = None,
    hi: float | None = None,
    value: float | None = None,
) -> str:
    """Fill one phrasing of ``template``."""
    zh = template.language is ZH
    when = zh_when(first, last) if zh else adverbial(expression)
    if zh:
        p = place.outer_zh + place.inner_zh + project_zh
    elif not place.inner and not place.outer:
        p = project  # a corpus without outer levels (a stock symbol)
    else:
        short = place.inner.removesuffix(" District")
        p = (
            f"{project} in {short}, {place.outer}"
            if form == 1 and short != place.inner
            else f"{project} in {place.inner}, {place.outer}"
        )
    values = {
        "when": when,
        "When": when[:1].upper() + when[1:],
        "p": p,
        "d": place_phrase(place, template.language, form),
        "n": zh_number(template.n) if zh else str(template.n),
        "lo": money(lo, template.language) if lo is not None else "",
        "hi": money(hi, template.language) if hi is not None else "",
        "v": money(value, template.language) if value is not None else "",
    }
    return template.phrasings[phrasing].format(**values)
