"""The typed ``Plan`` a question is parsed into (docs/design.md §2–4).

It is the contract between the parser, the retriever / SQL builder, the forecaster glue,
the analyzer and the benchmark: every downstream stage reads only this.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache

from foretab.core.months import Month, month_range
from foretab.corpus.schema import CorpusSchema, default_schema


class Task(StrEnum):
    """What kind of question: numeric forecast, forecast-based reasoning, or history."""

    FORECAST = "forecast"
    REASONING = "reasoning"
    HISTORY = "history"


class Aggregate(StrEnum):
    """How the window's monthly prices become the target value(s)."""

    VALUE = "value"  # the single month of a one-month window
    MEAN = "mean"
    MAX = "max"
    MIN = "min"
    EACH = "each"  # every month of the window, listed
    SUM = "sum"  # units sold over the window
    MEDIAN = "median"  # the median of the window's monthly values
    WEIGHTED = "weighted"  # the price weighted by the units sold (past months only)


class Comparison(StrEnum):
    """The reasoning asked for; ``NONE`` for numeric questions."""

    NONE = "none"
    VS_CURRENT = "vs_current"  # one project: Increase / Decrease / No change
    WHICH_RISE = "which_rise"  # several: every project whose target > current
    WHICH_FALL = "which_fall"
    RISES_MOST = "rises_most"  # several: the one with the largest rise (None if none rises)
    FALLS_MOST = "falls_most"
    HIGHEST = "highest"  # several: the one with the highest target
    LOWEST = "lowest"


class ChangeMeasure(StrEnum):
    """Change vs current: absolute (target − current) or relative ((t − c) / c)."""

    ABSOLUTE = "absolute"
    RELATIVE = "relative"


class Metric(StrEnum):
    """The column a question is about: the average price or the units sold."""

    VALUE = "value"  # the primary measure (named by the schema, e.g. price)
    UNITS = "units"


class Extreme(StrEnum):
    """Highest or lowest: which-month questions and scope picks."""

    HIGHEST = "highest"
    LOWEST = "lowest"


class Language(StrEnum):
    """The language of the question, and so of the text answer and the names printed."""

    EN = "en"
    ZH = "zh"


@dataclass(frozen=True, slots=True, order=True)
class EntityRef:
    """An entity resolved against the catalog: its leaf ``name`` inside its two outer levels.

    The corpus schema's levels fill the slots outermost first (``outer``, ``inner``, then
    ``name``); a one-level schema fills only ``name`` and leaves the others empty.
    ``name_zh`` (the Chinese name, when the store has one) is for printing only: it takes
    no part in equality, hashing or ordering, so a ref rebuilt from a row is the same key.
    """

    outer: str
    inner: str
    name: str
    name_zh: str = field(default="", compare=False)

    def display_name(self, language: Language) -> str:
        return self.name_zh if language is Language.ZH and self.name_zh else self.name


@dataclass(frozen=True, slots=True, order=True)
class ScopeRef:
    """An inner group (or a whole outer one when ``inner`` is None) asked about as a whole."""

    outer: str
    inner: str | None = None
    name_zh: str = field(default="", compare=False)

    @property
    def label(self) -> str:
        return f"{self.inner}, {self.outer}" if self.inner else self.outer


class ScopeOp(StrEnum):
    """What a scope question asks of the scope's projects (docs/design.md §4, scope table)."""

    PICK = "pick"  # the highest / lowest / best-selling project
    TOP = "top"  # the top N by the metric ("cheapest N" ascending)
    FILTER = "filter"  # projects with price between / above / below bounds
    TOP_THEN_PICK = "top_then_pick"  # among the top N by units, the highest / lowest price
    FILTER_THEN_PICK = "filter_then_pick"  # in the price range, the best-selling one
    MEAN = "mean"  # mean price of the projects' values
    TOTAL = "total"  # total units sold
    COUNT = "count"  # how many projects had sales
    EACH = "each"  # every project with its value ("every project of D")
    WEIGHTED = "weighted"  # the units-weighted mean price over the projects' months


@dataclass(frozen=True, slots=True)
class ScopeQuery:
    """A scope question: ``op`` over the candidates of each scope, by ``metric``.

    ``rank_by`` orders TOP / TOP_THEN_PICK (units for "best-selling"), ``n`` is their N,
    ``extreme`` picks (PICK, TOP_THEN_PICK) or orders (TOP); ``low``/``high`` bound FILTER
    (inclusive; either may be None). ``combined``: a TOTAL over several scopes is one sum
    ("in total", "altogether", 一共), not one total a scope.
    """

    op: ScopeOp
    metric: Metric = Metric.VALUE
    extreme: Extreme = Extreme.HIGHEST
    rank_by: Metric = Metric.VALUE
    n: int = 1
    low: float | None = None
    high: float | None = None
    combined: bool = False

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"a ranking needs N >= 1, got {self.n}")
        if (
            self.op in (ScopeOp.FILTER, ScopeOp.FILTER_THEN_PICK)
            and self.low is None
            and self.high is None
        ):
            raise ValueError("a range filter needs a lower or an upper bound")
        if self.low is not None and self.high is not None and self.low > self.high:
            low, high = self.high, self.low  # "between 60000 and 40000"
            object.__setattr__(self, "low", low)
            object.__setattr__(self, "high", high)


class PlaceOp(StrEnum):
    """What a question asks of districts or cities as wholes (docs/design.md §4.1).

    A place's value for a month is the plain mean of its projects' values that month (the
    units sold: their sum); the operation then runs on that series.
    """

    VALUE = "value"  # each place's value (a month, the window's mean, or each month)
    CHANGE = "change"  # last − first month of the window (YoY / MoM: the two months)
    DIRECTION = "direction"  # the target vs the value at R: Increase / Decrease / No change
    COMPARE = "compare"  # several places: the highest / lowest, or the one rising most
    RANK = "rank"  # the districts of a city ranked: the top / bottom N
    EVERY = "every"  # every district of a city with its value
    WHICH_MONTH = "which_month"  # the window's highest / lowest month of one place
    THRESHOLD = "threshold"  # one place above / below a value: Yes / No
    COUNT = "count"  # how many of its projects lie in a value range


@dataclass(frozen=True, slots=True)
class PlaceQuery:
    """A question about places as wholes: ``op`` over each place's monthly series.

    ``each`` lists every month (VALUE); ``change`` is absolute or relative (CHANGE, and
    COMPARE by change); ``extreme`` and ``n`` rank (COMPARE, RANK, WHICH_MONTH);
    ``low`` / ``high`` bound COUNT; ``threshold`` is THRESHOLD's; ``named`` prints the
    places' names beside their values ("compare the average prices of A and B").
    """

    op: PlaceOp
    change: ChangeMeasure | None = None
    extreme: Extreme = Extreme.HIGHEST
    n: int = 1
    low: float | None = None
    high: float | None = None
    threshold: Threshold | None = None
    each: bool = False
    named: bool = False


@dataclass(frozen=True, slots=True)
class Threshold:
    """An "above / below V" question: the answer is Yes or No."""

    above: bool
    value: float


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """The months a question asks about, inclusive, and the text that named them.

    ``only`` lists the months when they are not one run ("2021年12月与2022年6月",
    "March and June 2021"); ``first``/``last`` then bound them.
    """

    first: Month
    last: Month
    expression: str = ""
    only: tuple[Month, ...] = ()

    @property
    def months(self) -> list[Month]:
        if self.only:
            return sorted(set(self.only))
        return month_range(self.first, self.last)


@dataclass(frozen=True, slots=True)
class Wording:
    """How answers name the corpus's measures: from the store's corpus schema.

    ``value`` is the primary measure ("price"), ``summed`` the summed one ("units sold");
    ``unit`` is shown after the measure's name; ``interval_decimals`` rounds the interval
    bounds in text answers.
    """

    value: str
    value_zh: str
    value_zh_short: str
    summed: str
    summed_zh: str
    unit: str = ""
    interval_decimals: int = 0
    # The leaf level's name and plural, and the group levels' names, innermost first
    # (e.g. project / projects and district, city): for messages.
    entity: str = ""
    entities: str = ""
    groups: tuple[str, ...] = ()
    groups_plural: tuple[str, ...] = ()
    groups_zh: tuple[str, ...] = ()  # the group levels in Chinese messages ("区", "城市")
    entity_zh: str = ""  # the leaf level in Chinese messages ("项目")
    place_average_zh: str = ""  # a whole place's average in Chinese messages ("平均房价")

    @classmethod
    def of(cls, schema: CorpusSchema) -> Wording:
        primary, summed = schema.primary, schema.summed
        value_zh = primary.name_zh or primary.name
        return cls(
            value=primary.name,
            value_zh=value_zh,
            value_zh_short=primary.short_zh or value_zh,
            summed=summed.name if summed else "",
            summed_zh=(summed.name_zh or summed.name) if summed else "",
            unit=primary.unit,
            interval_decimals=primary.decimals if primary.decimals is not None else 0,
            entity=schema.leaf.name,
            entities=schema.leaf.plural_name,
            groups=tuple(level.name for level in reversed(schema.groups)),
            groups_plural=tuple(level.plural_name for level in reversed(schema.groups)),
            groups_zh=tuple(
                level.name_zh or (level.words_zh or (level.name,))[0]
                for level in reversed(schema.groups)
            ),
            entity_zh=schema.phrasing.entity_zh or schema.leaf.name,
            place_average_zh=schema.phrasing.place_average_zh or f"平均{value_zh}",
        )

    def metric_name(self, metric: Metric) -> str:
        """The plan JSON's name of a metric: the primary measure's name, or ``units``."""
        return self.value if metric is Metric.VALUE else metric.value

    @property
    def named_levels(self) -> str:
        """Every level, leaf first: ``project, district or city``."""
        names = [self.entity, *self.groups]
        return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"

    @property
    def value_label(self) -> str:
        """The primary measure with its unit: ``price`` or ``price (USD)``."""
        return f"{self.value} ({self.unit})" if self.unit else self.value


@cache
def default_wording() -> Wording:
    """The real-estate schema's wording: plans built without a store's schema."""
    return Wording.of(default_schema())


@dataclass(frozen=True, slots=True)
class Plan:
    """Everything the engine needs to answer one question."""

    question: str
    reference_month: Month
    entities: tuple[EntityRef, ...]
    window: TimeWindow
    aggregate: Aggregate
    task: Task
    comparison: Comparison = Comparison.NONE
    measure: ChangeMeasure = ChangeMeasure.ABSOLUTE
    metric: Metric = Metric.VALUE
    # A numeric change ("how much will it rise", "by what percentage"): target − current
    # for a future window, last − first month with a value for a past one.
    change: ChangeMeasure | None = None
    which_month: Extreme | None = None  # "in which month ... highest / lowest"
    threshold: Threshold | None = None  # "above / below V" → Yes / No
    scopes: tuple[ScopeRef, ...] = ()  # scope questions: one item per scope, in order
    scope: ScopeQuery | None = None
    place: PlaceQuery | None = None  # the scopes asked about as wholes (docs/design.md §4.1)
    assumption: str = ""  # a default the planner chose ("no time given: now")
    # The window is "now" (R): a project's value is its current price, the value at R
    # else the latest month before it (docs/design.md §4).
    current: bool = False
    language: Language = Language.EN
    # The corpus's names for its measures, for the text answer (set by the planner).
    wording: Wording = field(default_factory=default_wording, compare=False)

    def __post_init__(self) -> None:
        # Every plan the planner can build is answerable; anything else is refused here,
        # before any table is read.
        from foretab.errors import QuestionError

        problems = _problems(self)
        if problems:
            raise QuestionError(f"this question cannot be answered: {problems[0]}")

    @property
    def needs_forecast(self) -> bool:
        """True when the window reaches past the reference month."""
        return self.window.last > self.reference_month

    @property
    def future_months(self) -> list[Month]:
        """The window's months after the reference month: what the forecast stage fills."""
        return [m for m in self.window.months if m > self.reference_month]

    @property
    def is_past(self) -> bool:
        return self.window.last <= self.reference_month


def _units_unforecast(plan: Plan) -> str:
    """What a future units plan asks that the units model's answers do not cover ('': none).

    Units forecasts (``forecast.units_source``) have a point and an 80% interval per
    project and month, no distribution: values, totals, a scope's total and rankings.
    """
    if plan.change is not None:
        return "a change"
    if plan.comparison is not Comparison.NONE:
        return f"a comparison between {plan.wording.entities}"
    if plan.threshold is not None:
        return "a threshold"
    if plan.which_month is not None:
        return "the month with the most"
    if plan.place is not None:
        return f"a question about a place as a whole ({plan.place.op.value})"
    if plan.scopes:
        op = plan.scope.op if plan.scope is not None else None
        return "" if op in _UNITS_SCOPE_OPS else "this question about a place"
    if plan.aggregate not in (Aggregate.VALUE, Aggregate.SUM, Aggregate.EACH):
        return f"a {plan.aggregate.value}"
    return ""


#: A scope's future units: its total, its best (or least) selling project, its top N.
_UNITS_SCOPE_OPS = (ScopeOp.TOTAL, ScopeOp.PICK, ScopeOp.TOP)


def _problems(plan: Plan) -> list[str]:
    out: list[str] = []
    words = plan.wording
    one, many = words.entity, words.entities
    if bool(plan.scopes) != (plan.scope is not None or plan.place is not None):
        out.append("a scope question needs both its scopes and what to compute over them")
    if plan.scopes and plan.comparison is not Comparison.NONE:
        out.append(f"a scope question cannot also compare named {many}")
    if not plan.scopes and not plan.entities:
        out.append(f"it names no {words.named_levels}")
    if plan.metric is Metric.UNITS and plan.needs_forecast and _units_unforecast(plan):
        out.append(
            f"future {words.summed} are forecast as a value, a total over months or a scope's "
            f"total or ranking, not {_units_unforecast(plan)}; ask for one of those"
        )
    if plan.scope is not None and plan.scope.op is ScopeOp.TOP_THEN_PICK and plan.needs_forecast:
        out.append(f"ranking by {words.summed} needs past months; ask about a past month")
    if (
        plan.scope is not None
        and plan.scope.rank_by is Metric.UNITS
        and plan.metric is not Metric.UNITS
        and plan.needs_forecast
    ):  # one future source per question: prices ranked by forecast units are not both
        out.append(f"ranking by {words.summed} needs past months; ask about a past month")
    if plan.scope is not None and plan.scope.op is ScopeOp.COUNT and plan.needs_forecast:
        out.append(f"how many {many} will have sales cannot be forecast; ask about past months")
    if plan.which_month is not None and (
        plan.comparison is not Comparison.NONE or len(plan.window.months) < 2
    ):
        out.append(f"'which month' needs a window of several months and one {one}")
    if plan.threshold is not None and len(plan.entities) != 1:
        out.append(f"'above / below a value' is asked of one {one}")
    if plan.change is not None and plan.aggregate is Aggregate.EACH:
        out.append("a change needs one value, not one per month")
    if plan.change is not None and plan.is_past and len(plan.window.months) < 2:
        out.append(
            "a past change needs a window of several months ('during 2021', "
            "'from March to June 2021')"
        )
    if plan.comparison is not Comparison.NONE and plan.aggregate is Aggregate.EACH:
        out.append(f"a comparison needs one target per {one}, not one per month")
    return out
