"""The history query of a plan, built as a sqlglot AST with bound ``?`` parameters.

One ``SELECT`` per year table, joined with ``UNION ALL``::

    SELECT CAST(? AS TEXT) AS city, CAST(? AS TEXT) AS district, project_name, month, price,
           units_sold
    FROM project_price_table_jiangning_district_nanjing_2021
    WHERE project_name IN (?, ?) AND month BETWEEN ? AND ?
    UNION ALL ...
    ORDER BY city, district, project_name, month

A scope question (a district or city as a whole) reads every project of the scope's year
tables in one scan: the same query without the name filter (``scope_query``).

The city and district columns (bound from the catalog entry of each table) give every row
its exact entity: "Huangpu District" exists in two cities, and project names repeat.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from sqlglot import exp

from foretab.core.months import Month
from foretab.core.plan import EntityRef
from foretab.corpus.schema import TableColumns, default_schema
from foretab.store.catalog import CatalogEntry


@dataclass(frozen=True)
class HistoryQuery:
    """A query and its parameters, in placeholder order.

    ``shape`` is all the AST depends on (the builder, its tables and how many names each
    filters on, the columns): queries of one shape differ only in their parameters, so
    their SQL text is generated once per shape and dialect, and the AST itself is built
    only when that text is not known yet (``build``; building and rendering it cost
    ~1 ms of a warm question).

    ``compose`` (optional) writes a new shape's text from parts rendered once per kind of
    select (``SelectLayout``), without building the AST: most shapes of a question are new
    (its tables and how many names it reads), and building and rendering cost 1.5–4 ms
    each. The parts come from sqlglot's own rendering, so the text is the AST's
    (``tests/sql/test_composed_text.py``); ``compose`` returns None where it cannot tell.
    """

    build: Callable[[], exp.Query] = field(repr=False, compare=False)
    params: tuple[object, ...]
    shape: tuple[object, ...] = ()
    compose: Callable[[str], str | None] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def of(cls, ast: exp.Query, params: tuple[object, ...]) -> HistoryQuery:
        """A query whose AST is already built (no shape: its text is never shared)."""
        return cls(lambda: ast, params)

    @cached_property
    def ast(self) -> exp.Query:
        return self.build()

    def sql(self, dialect: str = "duckdb") -> str:
        if not self.shape:
            return self.ast.sql(dialect=dialect)
        key = (self.shape, dialect)
        text = _TEXT_BY_SHAPE.get(key)
        if text is None:
            text = self.compose(dialect) if self.compose is not None else None
            if text is None:
                text = self.ast.sql(dialect=dialect)
            if len(_TEXT_BY_SHAPE) >= _TEXTS_KEPT:
                _TEXT_BY_SHAPE.pop(next(iter(_TEXT_BY_SHAPE)))
            _TEXT_BY_SHAPE[key] = text
        return text


#: A table name no store has (a store's tables are ``<name>_<year>``): it marks where a
#: select's table goes in the text rendered for a kind of select.
SENTINEL_TABLE = "foretab_sentinel_table"


@dataclass(frozen=True, slots=True)
class SelectLayout:
    """A kind of per-table select as sqlglot renders it: ``before`` + table + ``after``."""

    before: str
    after: str
    placeholders: int

    def text(self, table: str, dialect: str, quoted: Callable[[str, str], str]) -> str:
        return self.before + quoted(table, dialect) + self.after


def select_layout(
    select: exp.Query, dialect: str, quoted: Callable[[str, str], str]
) -> SelectLayout | None:
    """``select`` (reading ``SENTINEL_TABLE`` once) split around its table; None if unsure."""
    text = select.sql(dialect=dialect)
    marker = f" FROM {quoted(SENTINEL_TABLE, dialect)} "
    if text.count(SENTINEL_TABLE) != 1 or text.count(marker) != 1:
        return None
    before, after = text.split(marker)
    placeholders = sum(1 for _ in select.find_all(exp.Placeholder))
    return SelectLayout(f"{before} FROM ", f" {after}", placeholders)


def joined_layout(
    one: str, three: str, single: SelectLayout, dialect: str, quoted: Callable[[str, str], str]
) -> tuple[str, str, str] | None:
    """``(prefix, separator, suffix)`` of a text holding one or three sentinel selects.

    ``one`` and ``three`` are the same statement rendered with one and with three
    ``single`` selects joined by ``UNION ALL``; None unless both are exactly
    prefix + select (+ separator + select) + suffix.
    """
    select = single.text(SENTINEL_TABLE, dialect, quoted)
    if one.count(select) != 1:
        return None
    prefix, suffix = one.split(select)
    if not (three.startswith(prefix + select) and three.endswith(select + suffix)):
        return None
    middle = three[len(prefix) + len(select) : len(three) - len(select) - len(suffix)]
    if (len(middle) - len(select)) % 2:
        return None
    half = (len(middle) - len(select)) // 2
    separator = middle[:half]
    if not separator or middle != separator + select + separator:
        return None
    return prefix, separator, suffix


@lru_cache(maxsize=4096)
def table_text(name: str, dialect: str) -> str:
    """``name`` as ``exp.table_`` renders it."""
    return exp.table_(name).sql(dialect=dialect)


#: SQL texts by (shape, dialect), oldest dropped first past ``_TEXTS_KEPT``.
_TEXT_BY_SHAPE: dict[tuple[object, ...], str] = {}
_TEXTS_KEPT = 4096


def default_columns() -> TableColumns:
    """The real-estate schema's table columns (callers that know no store's schema)."""
    return default_schema().columns


# The builders below pass ``copy=False`` and build nodes rather than parse strings: each
# builder call otherwise deep-copies the whole tree and re-parses every column name, which
# cost about 6 ms of a question's ~17 (the SQL text is the same either way).
_TEXT = exp.DataType.build("text")


def _select(table: CatalogEntry, condition: exp.Expression, cols: TableColumns) -> exp.Select:
    # The two outer entity slots are bound from the catalog (empty for a one-level schema),
    # named as the schema names its group levels (city, district).
    slots = [
        exp.alias_(exp.Cast(this=exp.Placeholder(), to=_TEXT.copy()), name, copy=False)
        for name in (cols.outer, cols.inner)
    ]
    return (
        exp.Select(expressions=[*slots, *(exp.column(c) for c in cols.standard)])
        .from_(exp.table_(table.table_name), copy=False)
        .where(condition, copy=False)
    )


def _months(cols: TableColumns) -> exp.Expression:
    return exp.Between(this=exp.column(cols.month), low=exp.Placeholder(), high=exp.Placeholder())


def history_query(
    tables: Sequence[CatalogEntry],
    entities: Sequence[EntityRef],
    first: Month,
    last: Month,
    cols: TableColumns | None = None,
) -> HistoryQuery | None:
    """The query for ``entities``' values from ``first`` to ``last`` (None if no table applies)."""
    cols = cols or default_columns()
    parts: list[tuple[CatalogEntry, int]] = []  # each table read, and how many names it filters
    params: list[object] = []
    shape: list[object] = ["history", cols]
    for table in tables:
        names = sorted(
            {p.name for p in entities if (p.outer, p.inner) == (table.outer, table.inner)}
        )
        lo, hi = max(first, Month(table.year, 1)), min(last, Month(table.year, 12))
        if not names or hi < lo:
            continue
        shape.append((table.table_name, len(names)))
        parts.append((table, len(names)))
        params += [table.outer, table.inner, *names, lo.first_day, hi.first_day]

    def build() -> exp.Query:
        return _union([_names_select(table, n_names, cols) for table, n_names in parts], cols)

    def compose(dialect: str) -> str | None:
        return _composed([(t.table_name, n) for t, n in parts], cols, dialect)

    return HistoryQuery(build, tuple(params), tuple(shape), compose) if parts else None


def _names_select(table: CatalogEntry, n_names: int, cols: TableColumns) -> exp.Select:
    """``history_query``'s select of ``table`` (``n_names`` names), or ``scope_query``'s (0)."""
    if not n_names:
        return _select(table, _months(cols), cols)
    names_in = exp.In(
        this=exp.column(cols.entity),
        expressions=[exp.Placeholder() for _ in range(n_names)],
    )
    return _select(table, exp.And(this=names_in, expression=_months(cols)), cols)


def _sentinel(n_names: int, cols: TableColumns) -> exp.Select:
    return _names_select(CatalogEntry(SENTINEL_TABLE, "", "", "", 0, 0), n_names, cols)


@lru_cache(maxsize=256)
def _layout(n_names: int, cols: TableColumns, dialect: str) -> SelectLayout | None:
    return select_layout(_sentinel(n_names, cols), dialect, table_text)


@lru_cache(maxsize=64)
def _frame(cols: TableColumns, dialect: str) -> tuple[str, str, str] | None:
    single = _layout(1, cols, dialect)
    if single is None:
        return None
    one = _union([_sentinel(1, cols)], cols).sql(dialect=dialect)
    three = _union([_sentinel(1, cols) for _ in range(3)], cols).sql(dialect=dialect)
    return joined_layout(one, three, single, dialect, table_text)


def _composed(reads: Sequence[tuple[str, int]], cols: TableColumns, dialect: str) -> str | None:
    """The text ``_union`` of ``reads``' selects renders (table, names; 0: months only)."""
    frame = _frame(cols, dialect)
    if frame is None:
        return None
    prefix, separator, suffix = frame
    texts = []
    for name, n_names in reads:
        layout = _layout(n_names, cols, dialect)
        if layout is None:
            return None
        texts.append(layout.text(name, dialect, table_text))
    return prefix + separator.join(texts) + suffix


def scope_query(
    tables: Sequence[CatalogEntry], first: Month, last: Month, cols: TableColumns | None = None
) -> HistoryQuery | None:
    """Every entity of ``tables`` from ``first`` to ``last``: one scan per year table."""
    cols = cols or default_columns()
    read: list[CatalogEntry] = []
    params: list[object] = []
    shape: list[object] = ["scope", cols]
    for table in tables:
        lo, hi = max(first, Month(table.year, 1)), min(last, Month(table.year, 12))
        if hi < lo:
            continue
        read.append(table)
        params += [table.outer, table.inner, lo.first_day, hi.first_day]
        shape.append(table.table_name)

    def build() -> exp.Query:
        return _union([_names_select(table, 0, cols) for table in read], cols)

    def compose(dialect: str) -> str | None:
        return _composed([(t.table_name, 0) for t in read], cols, dialect)

    return HistoryQuery(build, tuple(params), tuple(shape), compose) if read else None


def _union(selects: list[exp.Select], cols: TableColumns) -> exp.Query:
    query: exp.Query = selects[0]
    for select in selects[1:]:
        query = exp.Union(this=query, expression=select, distinct=False)
    order = [exp.Ordered(this=exp.column(c), nulls_first=True) for c in _order(cols)]
    return query.order_by(*order, copy=False)


def _order(cols: TableColumns) -> tuple[str, ...]:
    return (cols.outer, cols.inner, cols.entity, cols.month)
