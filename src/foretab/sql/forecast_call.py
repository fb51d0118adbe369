"""``forecast(table [, horizon => N] [, level => p] [, entities => [...]])`` in the guarded SQL.

The guard resolves every call before anything runs (docs/design.md §10). Inside the worker,
``extract_calls`` checks each call's arguments (a catalog table name as a string literal,
literal options, no nesting) and puts a stand-in table in its place; the engine then
computes the rows from history (``foretab.sql.forecast_rows``) and ``bind_relations``
defines each stand-in as a CTE over bound arrays — the forecast values are parameters,
never SQL text::

    WITH foretab_forecast_1 AS (
      SELECT UNNEST(CAST(? AS TEXT[])) AS project_name, UNNEST(CAST(? AS DATE[])) AS month,
             UNNEST(CAST(? AS DOUBLE[])) AS value, ... lo, ... hi)
    SELECT project_name, AVG(value) FROM foretab_forecast_1 AS forecast GROUP BY ...

This module runs in the worker process: it imports no model and reads no store.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from sqlglot import exp

from foretab.errors import GuardError

if TYPE_CHECKING:
    from foretab.sql.guard import GuardedExecutor

FUNCTION = "forecast"
#: The prefix of the stand-in relations; a user's CTE may not start with ``foretab_``.
STAND_IN_PREFIX = "foretab_forecast_"
DEFAULT_LEVEL = 0.8
#: Intervals narrower or wider than this say little (and the model's grid is 1%..99%).
LEVEL_RANGE = (0.5, 0.98)
#: Each call forecasts a whole table: a handful per statement is plenty.
MAX_CALLS = 4
MAX_ENTITIES = 1_000
OPTIONS = ("horizon", "level", "entities")
#: The relation's columns after the table's entity column(s).
VALUE_COLUMNS = ("month", "value", "lo", "hi")


@dataclass(frozen=True, slots=True)
class ForecastSupport:
    """What an executor that can forecast tells its worker.

    The store model's horizon, and the tables' entity column (``project_name``).
    """

    horizon: int
    entity_column: str


@dataclass(frozen=True, slots=True)
class ForecastCall:
    """One checked call: which table, how far ahead, which interval, which entities."""

    table: str  # lower-case catalog name
    horizon: int
    level: float = DEFAULT_LEVEL
    entities: tuple[str, ...] | None = None  # None: every entity of the table


@dataclass(frozen=True, slots=True)
class ForecastRows:
    """The rows of one call, column by column (bound as five array parameters)."""

    entity_column: str
    entities: tuple[str, ...]
    months: tuple[dt.date, ...]
    values: tuple[float, ...]
    lo: tuple[float | None, ...]
    hi: tuple[float | None, ...]

    @classmethod
    def empty(cls, entity_column: str) -> ForecastRows:
        return cls(entity_column, (), (), (), (), ())

    def params(self) -> tuple[list[object], ...]:
        return (
            list(self.entities),
            list(self.months),
            list(self.values),
            list(self.lo),
            list(self.hi),
        )


class ForecastProvider(Protocol):
    """Computes the rows of forecast calls on the engine's side (``forecast_rows``)."""

    @property
    def support(self) -> ForecastSupport: ...

    def load(self) -> None:
        """One-time setup (the model file), timed apart from the statement's limit."""
        ...

    def rows(
        self, calls: Sequence[ForecastCall], guard: GuardedExecutor
    ) -> tuple[ForecastRows, ...]: ...


def _refuse_position(node: exp.Expression) -> None:
    raise GuardError(
        "forecast-position",
        f"forecast(...) is a relation: use it in FROM or JOIN (SELECT ... FROM "
        f"forecast('table', horizon => 12)), not as a value ({node.sql()[:60]!r})",
    )


def _is_forecast(node: exp.Expression) -> bool:
    return isinstance(node, exp.Anonymous) and str(node.name).lower() == FUNCTION


def extract_calls(
    root: exp.Query, allowed: Collection[str], horizon: int
) -> tuple[ForecastCall, ...]:
    """Check every forecast call of ``root`` and replace it by a stand-in table, in place.

    ``allowed``: the catalog's lower-case table names; ``horizon``: the store model's
    horizon (0: this executor cannot forecast, every call is refused).
    """
    for table in root.find_all(exp.Table):
        if table.name.lower().startswith(STAND_IN_PREFIX):
            raise GuardError(
                "unknown-table",
                f"table {table.name!r} is not in the store's catalog; run `foretab tables` "
                "to list them",
            )
    found = [node for node in root.find_all(exp.Anonymous) if _is_forecast(node)]
    if not found:
        return ()
    if horizon < 1:
        raise GuardError(
            "forecast-unavailable",
            "forecast() needs the store's fitted model, which this SQL connection does not "
            "have; run the statement with `foretab sql`, POST /api/sql or Engine.sql",
        )
    for node in found:
        if any(_is_forecast(a) for a in node.find_all(exp.Anonymous) if a is not node):
            raise GuardError(
                "forecast-nesting",
                "forecast() cannot appear inside forecast()'s own arguments; name one "
                "catalog table as a string literal",
            )
        parent = node.parent
        if not isinstance(parent, exp.Table) or parent.this is not node:
            _refuse_position(node)
        if parent.args.get("db") or parent.args.get("catalog"):
            raise GuardError(
                "forecast-position", "forecast(...) cannot be schema-qualified; call it bare"
            )
    if len(found) > MAX_CALLS:
        raise GuardError(
            "forecast-position",
            f"{len(found)} forecast() calls in one statement; at most {MAX_CALLS} (join "
            "their tables' histories instead, or run several statements)",
        )
    tables = {t for t in allowed if not t.startswith("foretab_")}
    calls: list[ForecastCall] = []
    for number, node in enumerate(found, start=1):
        calls.append(_call(node, tables, horizon))
        table = node.parent
        assert isinstance(table, exp.Table)
        stand_in = exp.Table(this=exp.to_identifier(f"{STAND_IN_PREFIX}{number}", quoted=True))
        alias = table.args.get("alias")
        stand_in.set("alias", alias or exp.TableAlias(this=exp.to_identifier(FUNCTION)))
        table.replace(stand_in)
    return tuple(calls)


def stand_in_names(calls: Sequence[ForecastCall]) -> frozenset[str]:
    """The stand-in tables ``extract_calls`` put in place of ``calls``."""
    return frozenset(f"{STAND_IN_PREFIX}{i}" for i in range(1, len(calls) + 1))


def _call(node: exp.Anonymous, tables: Collection[str], horizon: int) -> ForecastCall:
    args = list(node.expressions)
    if not args or isinstance(args[0], (exp.Kwarg, exp.PropertyEQ)):
        raise GuardError(
            "forecast-table",
            "forecast() needs a catalog table name as its first argument, e.g. "
            "forecast('<table>') with a name from `foretab tables`",
        )
    table = _table_name(args[0], tables)
    options: dict[str, exp.Expression] = {}
    for arg in args[1:]:
        if not isinstance(arg, (exp.Kwarg, exp.PropertyEQ)):
            raise GuardError(
                "forecast-option",
                f"forecast() takes one table and named options ({', '.join(OPTIONS)} => "
                f"literal), got {arg.sql()[:60]!r}",
            )
        name = str(arg.this.name).lower()
        if name not in OPTIONS:
            raise GuardError(
                "forecast-option",
                f"forecast() has no option {name!r}; its options are {', '.join(OPTIONS)}",
            )
        if name in options:
            raise GuardError("forecast-option", f"forecast() option {name!r} is given twice")
        options[name] = arg.expression
    return ForecastCall(
        table=table,
        horizon=_horizon(options.get("horizon"), horizon),
        level=_level(options.get("level")),
        entities=_entities(options.get("entities")),
    )


def _table_name(arg: exp.Expression, tables: Collection[str]) -> str:
    if not (isinstance(arg, exp.Literal) and arg.is_string):
        raise GuardError(
            "forecast-table",
            f"forecast()'s first argument must be a catalog table name as a string literal "
            f"(forecast('<table>')), got {arg.sql()[:60]!r}",
        )
    name = str(arg.this).lower()
    if name not in tables:
        raise GuardError(
            "forecast-table",
            f"{str(arg.this)[:80]!r} is not a history table of the store's catalog; "
            "run `foretab tables` to list them",
        )
    return name


def _number(value: exp.Expression | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, exp.Literal) and not value.is_string:
        try:
            return float(value.this)
        except ValueError:
            pass
    raise GuardError(
        "forecast-option",
        f"forecast() options must be plain number literals, got {value.sql()[:60]!r}",
    )


def _horizon(value: exp.Expression | None, store_horizon: int) -> int:
    number = _number(value)
    if number is None:
        return store_horizon
    if not number.is_integer() or not 1 <= number <= store_horizon:
        raise GuardError(
            "forecast-option",
            f"horizon => {value.sql() if value else ''} is out of range; the store's model "
            f"forecasts 1 to {store_horizon} months after the reference month",
        )
    return int(number)


def _level(value: exp.Expression | None) -> float:
    number = _number(value)
    if number is None:
        return DEFAULT_LEVEL
    low, high = LEVEL_RANGE
    if not low <= number <= high:
        raise GuardError(
            "forecast-option",
            f"level => {number:g} is out of range; give the interval's level between "
            f"{low} and {high} (0.8 = an 80% interval)",
        )
    return number


def _entities(value: exp.Expression | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    items = value.expressions if isinstance(value, exp.Array) else None
    if (
        not items
        or len(items) > MAX_ENTITIES
        or not all(isinstance(i, exp.Literal) and i.is_string for i in items)
    ):
        raise GuardError(
            "forecast-option",
            f"entities => must be a non-empty list of at most {MAX_ENTITIES:,} string "
            "literals naming the table's entities, e.g. entities => ['A', 'B']",
        )
    return tuple(dict.fromkeys(str(i.this) for i in items))


_TYPES = ("TEXT", "DATE", "DOUBLE", "DOUBLE", "DOUBLE")


def bind_relations(
    root: exp.Query, rows: Sequence[ForecastRows]
) -> tuple[exp.Query, tuple[object, ...]]:
    """Define every stand-in as a CTE over bound arrays, first in the statement's WITH.

    First, so that their placeholders come before the statement's own: the parameters are
    the forecasts' arrays followed by the caller's.
    """
    ctes: list[exp.CTE] = []
    params: list[object] = []
    for number, relation in enumerate(rows, start=1):
        columns = (relation.entity_column, *VALUE_COLUMNS)
        select = exp.Select(
            expressions=[
                exp.alias_(
                    exp.Unnest(
                        expressions=[
                            exp.Cast(
                                this=exp.Placeholder(), to=exp.DataType.build(f"ARRAY<{kind}>")
                            )
                        ]
                    ),
                    exp.to_identifier(column, quoted=True),
                    copy=False,
                )
                for column, kind in zip(columns, _TYPES, strict=True)
            ]
        )
        ctes.append(
            exp.CTE(
                this=select,
                alias=exp.TableAlias(
                    this=exp.to_identifier(f"{STAND_IN_PREFIX}{number}", quoted=True)
                ),
            )
        )
        params.extend(relation.params())
    if not ctes:
        return root, ()
    with_ = root.args.get("with_")
    if isinstance(with_, exp.With):
        with_.set("expressions", [*ctes, *with_.expressions])
    else:
        root.set("with_", exp.With(expressions=ctes))
    return root, tuple(params)
