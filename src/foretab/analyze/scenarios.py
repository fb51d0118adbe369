"""Scenario draws of window targets from a forecast's predictive distribution.

One predictive model serves every uncertain answer: probabilities of reasoning and scope
answers, and intervals of numeric answers over a window. A forecast that carries
quantiles (``Forecast.grid`` / ``ForecastPoint.quantiles``) gives each entity and month a
distribution; a scenario draws one value for every (entity, month) through a Gaussian
copula and reduces each entity's window months to its target (mean / max / min).

* **Within an entity, months are correlated** (``MONTH_CORRELATION``): an entity's
  forecast errors persist (one that comes in 10% low in March is low in April too), but a
  month's value is the average of a few sales and carries noise of its own.
* **Across entities of one group** (the level above the entity, e.g. a district) a
  shared shock (``SHARED_CORRELATION``), and across the groups of one city another
  (``OUTER_CORRELATION``): a market moves its entities together; entities of different
  cities are independent. Each shock is part of an entity's lasting error (``rho``), so
  an entity's own distribution, and so every one-project answer, is the same with or
  without them; only means and comparisons across projects see them.
* **Part of each shock may be drawn afresh each month** (``FLEETING``; none by default):
  part of a market's monthly move may not last (on 2021 two projects of one district
  correlated 0.081 within a month, 0.060 across months). The fleeting part is taken
  from the entities' month noise (never more than all of it), so an entity's months
  still correlate ``rho``; a place's mean in one month is as uncertain as before, its
  mean over a window less.
* **Or the shocks may grow with the horizon** (``GROWTH``; none by default): a market's
  fall that lasts (2022) moves a place further from its forecast the further ahead the
  month, which a shock of one size at every horizon does not describe. A random walk per
  place adds ``GROWTH × (shared + outer)`` of variance per month after R, taken from the
  entities' month noise (never more than all of it), so an entity's own distribution in
  each month is unchanged; its months correlate a little more (by the walk's variance
  at the earlier month).
* **Or part of the group's shock may pass to the outer place's with the horizon**
  (``SHIFT``; none by default): a move late in the horizon may be citywide rather than
  a district's own. Per month after R, ``SHIFT`` of the group shock's variance passes to
  a random walk per outer place (all of it at ``1 / SHIFT`` months): two entities of one
  group still correlate ``shared + outer`` in every month, two of one outer place in
  different groups ``outer`` at R rising to ``shared + outer``; an entity's own
  distribution in each month is unchanged.

Everything is vectorised over entities, months and scenarios (``[scenarios, entities,
months]`` arrays, drawn in chunks of entities to bound memory), so a scope with hundreds
of candidates costs tens of milliseconds, not seconds.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

import numpy as np

from foretab.analyze.draw_positions import POSITIONS, DrawShape, read_at
from foretab.core.months import Month
from foretab.core.plan import Aggregate, EntityRef, Plan
from foretab.core.series import Forecast, History
from foretab.errors import QuestionError

N_SCENARIOS = 4000
#: Correlation of one entity's forecast errors between two future months (Gaussian
#: copula; 1 is comonotone). Chosen on the QA val split over 0, 0.2, 0.5, 0.7 and 1 with
#: pooled intervals (0.5 then); with per-series intervals (``foretab.forecast.spread``)
#: again over 0.3, 0.5, 0.6, 0.7, 0.8 and 0.9: 0.7 had the lowest reasoning and scope
#: Brier scores and put a window maximum's 80% interval at 82.6% (0.5: 75.7%):
#: docs/benchmarks/uncertainty.md.
MONTH_CORRELATION = 0.7
#: Correlation of the forecast errors of two entities of the same group (0: independent),
#: beyond the city's shock below. Measured on the QA val split's projects: the normal
#: scores of their 2022 values under the forecast quantiles correlate 0.07 between two
#: projects of one district. 0.1 alone was chosen on val (docs/benchmarks/uncertainty.md);
#: with the city shock (issue 30) 0.05 + 0.05, chosen on the 2020-12 store's hold-out
#: (``foretab bench corpus --answers``): a district's monthly mean's 80% interval covered
#: 83.3% (83.6% before), a city's 80.2% (65.6% with no city shock; docs/calibration.md).
SHARED_CORRELATION = 0.05
#: Correlation of the forecast errors of two entities of one outer place (a city) in
#: different groups; two entities of one group correlate ``SHARED_CORRELATION +
#: OUTER_CORRELATION`` (0.1, as before the city shock).
OUTER_CORRELATION = 0.05
#: The share of each shock (group and outer place) drawn afresh every month; the rest
#: lasts through the window. 0: not kept. 1 was chosen on the 2020-12 store's hold-out (a
#: district's mean over 3 / 6 / 12 months covered 86 / 91 / 94% of 2021 with lasting
#: shocks, 84 / 85 / 84% with fleeting ones), but on 2022 it covered 81 / 83 / 66% (a fall
#: that lasted) and made the QA val reasoning Brier score worse (+0.0031, 95% +0.0005 to
#: +0.0061): docs/calibration.md, "Windows".
FLEETING = 0.0
#: Per month after R, the shocks' variance grows by this share of itself (a random walk
#: per place); 0: a shock of one size at every horizon. Not chosen on the 2020-12 store's
#: hold-out: at 0.025–0.2 a district's monthly mean covered 84–88% of 2021 (83.3% at 0)
#: before a city's months 10–12 reached 80% (54% at 0, 75% at 0.2): docs/calibration.md,
#: "Shocks that grow with the horizon".
GROWTH = 0.0
#: Per month after R, this share of the group shock's variance passes to a random walk of
#: its outer place (all of it from ``1 / SHIFT`` months on); 0: the shares stay as at R.
#: Not kept: 0.08 with ``OUTER_CORRELATION`` 0.03, chosen on the 2020-12 store's hold-out
#: (a city's months 10–12 covered 58% of 2021, 54% before), put a district's monthly mean
#: out of the band on 2022 (76.4%, 77.8% before) for a city's 70.8% (69.8%):
#: docs/calibration.md, "A district's shock that passes to its city".
SHIFT = 0.0
#: Scenarios are drawn with a fixed seed: the same question gets the same answer.
SEED = 0
#: At most this many (scenario, entity, month) cells are drawn at once (8 bytes each):
#: about 16 MB per working array, whatever the scope's size.
CHUNK_CELLS = 2_000_000
#: Within a chunk, the per-cell steps after the normals run this many cells at a time
#: (1 MB per working array: in the cache).
DRAW_BLOCK_CELLS = 131_072


@dataclass(frozen=True, slots=True)
class Copula:
    """The scenarios' correlations: months of an entity, entities of a group, of a city.

    Two entities of one group (a district) correlate ``shared + outer``, two of one outer
    place (a city) in different groups ``outer``.

    ``foretab bench run --month-correlation X --shared-correlation Y --outer-correlation Z``
    sets them.
    """

    months: float = MONTH_CORRELATION
    shared: float = SHARED_CORRELATION
    outer: float = OUTER_CORRELATION
    #: the share of each shock drawn afresh every month (``FLEETING``)
    fleeting: float = FLEETING
    #: per month after R, the shocks' variance grows by this share of itself (``GROWTH``)
    growth: float = GROWTH
    #: per month after R, this share of the group shock passes to the outer place's (``SHIFT``)
    shift: float = SHIFT

    def __post_init__(self) -> None:
        if not (
            self.shared >= 0 and self.outer >= 0 and self.shared + self.outer <= self.months <= 1
        ):
            raise QuestionError(
                f"the correlations must satisfy 0 <= shared ({self.shared:g}), 0 <= outer "
                f"({self.outer:g}), shared + outer <= months ({self.months:g}) <= 1: the shocks "
                "are part of each entity's lasting error; e.g. --month-correlation 0.7 "
                "--shared-correlation 0.1 --outer-correlation 0.1"
            )
        if not 0 <= self.fleeting <= 1:
            raise QuestionError(
                f"the fleeting share ({self.fleeting:g}) must lie in 0..1 (0: the shocks last "
                "through the window, 1: every month draws them afresh), e.g. --fleeting-share 0.5"
            )
        if not (self.growth >= 0 and np.isfinite(self.growth)):
            raise QuestionError(
                f"the shocks' growth ({self.growth:g}) must be a finite number >= 0 (0: the "
                "same shock at every horizon), e.g. --shock-growth 0.1"
            )
        if not (self.shift >= 0 and np.isfinite(self.shift)):
            raise QuestionError(
                f"the shocks' shift ({self.shift:g}) must be a finite number >= 0 (0: the "
                "group's and the outer place's shares stay as they are at every horizon), "
                "e.g. --shock-shift 0.08"
            )


# The analyzer in force sets its copula for the duration of one analysis (``using``);
# outside one, the module defaults apply. A context variable, so concurrent engines
# (threads of the web server) never see each other's.
_COPULA: ContextVar[Copula | None] = ContextVar("copula", default=None)


def copula() -> Copula:
    """The copula in force: the running analyzer's, else the module defaults."""
    return _COPULA.get() or Copula(
        MONTH_CORRELATION, SHARED_CORRELATION, OUTER_CORRELATION, FLEETING, GROWTH, SHIFT
    )


def described(n: int = N_SCENARIOS) -> str:
    """The scenario model in words (the current copula), for the trace's ``uncertainty``."""
    chosen = copula()
    shocks = [
        *([f"shared shock {chosen.shared:g} within a group"] if chosen.shared > 0 else []),
        *([f"{chosen.outer:g} within an outer place"] if chosen.outer > 0 else []),
    ]
    across = ", ".join(shocks) or "entities independent"
    if shocks and chosen.fleeting > 0:
        across += f", {chosen.fleeting:g} of them drawn afresh each month"
    if shocks and chosen.growth > 0:
        across += f", their variance growing by {chosen.growth:g} of itself a month ahead"
    if chosen.shared > 0 and chosen.shift > 0:
        across += (
            f", {chosen.shift:g} of the group shock's variance passing to the outer place's "
            "a month ahead"
        )
    return (
        f"{n:,} scenarios from the forecast quantiles (months through a Gaussian copula, "
        f"correlation {chosen.months:g}; {across})"
    )


@contextmanager
def using(chosen: Copula | None) -> Iterator[None]:
    """Draw with ``chosen`` (None: the defaults) inside the block."""
    token = _COPULA.set(chosen)
    try:
        yield
    finally:
        _COPULA.reset(token)


@dataclass(frozen=True, slots=True)
class WindowTable:
    """The window's values per entity and month as quantile functions.

    ``values[e, m, :]`` is entity ``e``'s value in window month ``m`` at the probability
    ``levels``: a forecast month's quantiles, an observed month's value repeated (it is
    known), anything in a month with neither (``present`` is False there).
    """

    refs: tuple[EntityRef, ...]
    levels: np.ndarray  # [levels], increasing
    values: np.ndarray  # [entities, months, levels]
    present: np.ndarray  # [entities, months] bool
    forecast: np.ndarray  # [entities, months] bool: the value is forecast (after R)
    #: [entities]: the chance that the value holds at ``current`` through the window
    #: (``held_share``); None: never
    held: np.ndarray | None = None
    current: np.ndarray | None = None  # [entities]: the last value up to R, rounded
    #: [months]: each window month's months after R (0 or less: up to R); None: unknown,
    #: the shocks do not grow (``Copula.growth``)
    horizon: np.ndarray | None = None

    def bounds(self, aggregate: Aggregate) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` per entity: every scenario's target lies between them.

        A drawn value never leaves its quantile function's range (draws are interpolated,
        never extrapolated) and the window aggregates are monotone in each month, so the
        aggregate of the lowest (highest) quantiles bounds every scenario exactly; a held
        value (``held``) may lie outside them and widens them.
        """
        low = reduce(self.values[:, :, 0], self.present, aggregate)
        high = reduce(self.values[:, :, -1], self.present, aggregate)
        if self.held is not None and self.current is not None:
            still = reduce(self._held_values(), self.present, aggregate)
            holds = self.held > 0
            low = np.where(holds, np.fmin(low, still), low)
            high = np.where(holds, np.fmax(high, still), high)
        return low, high

    def _held_values(self) -> np.ndarray:
        """``[entities, months]``: the window with every forecast month at ``current``."""
        assert self.current is not None
        return np.where(self.forecast, self.current[:, None], self.values[:, :, 0])

    def subset(self, keep: np.ndarray) -> WindowTable:
        """The table of the entities at ``keep`` (indices, in order)."""
        return WindowTable(
            tuple(self.refs[i] for i in keep),
            self.levels,
            self.values[keep],
            self.present[keep],
            self.forecast[keep],
            None if self.held is None else self.held[keep],
            None if self.current is None else self.current[keep],
            self.horizon,
        )


def has_distribution(forecast: Forecast, refs: Sequence[EntityRef]) -> bool:
    """True when every forecast month of ``refs`` carries quantiles on ``forecast.grid``."""
    if len(forecast.grid) < 2:
        return False
    size = len(forecast.grid)
    return all(
        len(p.quantiles) == size for ref in refs for p in forecast.points.get(ref, {}).values()
    )


def window_table(
    plan: Plan,
    refs: Sequence[EntityRef],
    history: History,
    forecast: Forecast,
    *,
    months: Sequence | None = None,
) -> WindowTable:
    """The window's (or ``months``') values of ``refs`` as quantile functions.

    Observed months up to R are fixed at their rounded value (as the answer rules round
    them); months after R take the forecast's quantiles. When the interval level asks for
    tails beyond the distribution grid (a 99% interval on a 1–99% grid), each forecast
    value's interval bounds extend it, so draws reach them.
    """
    window = list(months if months is not None else plan.window.months)
    levels = np.asarray(forecast.grid, dtype=float)
    extend = _tails(forecast, levels, refs)
    if extend:
        levels = np.concatenate([[extend[0]], levels, [extend[1]]])
    n_levels = levels.size
    values = np.zeros((len(refs), len(window), n_levels))
    present = np.zeros((len(refs), len(window)), dtype=bool)
    forecast_cells = np.zeros_like(present)
    reference = plan.reference_month
    for e, ref in enumerate(refs):
        points = forecast.points.get(ref, {})
        observed = history[ref]
        for m, month in enumerate(window):
            if month > reference and month in points:
                p = points[month]
                qs = p.quantiles or (p.value,) * len(forecast.grid)
                if extend:
                    qs = (min(p.lo, qs[0]), *qs, max(p.hi, qs[-1]))  # type: ignore[type-var]
                values[e, m] = qs
                forecast_cells[e, m] = True
            elif month <= reference and month in observed:
                values[e, m] = round(float(observed[month]), 2)
            else:
                continue
            present[e, m] = True
        if not present[e].any():
            raise QuestionError(
                f"{ref.display_name(plan.language)} has no value in the window to reason about"
            )
    # Quantile crossings (separately fitted levels) would make a draw non-monotone in u.
    values = np.maximum.accumulate(values, axis=2)
    held, current = _holding(refs, history, reference)
    horizon = np.asarray([month.minus(reference) for month in window], dtype=int)
    return WindowTable(tuple(refs), levels, values, present, forecast_cells, held, current, horizon)


def held_share(observed: Mapping[Month, float], reference: Month) -> float:
    """The share of month-to-month steps in the 12 months to R where the value held.

    Some entities keep one value for months on end (a project's listed price): their next
    value equals the current one exactly (the answers' "No change", or neither rising nor
    falling), which no continuous forecast distribution gives. On the real-estate corpus
    the share predicts the chance that a later month's value still equals R's (R =
    2020-12: share 1 → 98% one month ahead, 79% twelve ahead; share ≈ 0.45 → 35% and 20%;
    share 0 → about 1%), so a scenario keeps the whole window at the current value with
    that chance (``WindowTable.held``). Values are compared in cents, as the answers are.
    """
    return _held_share([observed.get(m) for m in _last_year(reference)])


@lru_cache(maxsize=64)
def _last_year(reference: Month) -> tuple[Month, ...]:
    return tuple(reference - k for k in range(11, -1, -1))


def _held_share(values: Sequence[float | None]) -> float:
    cents = [None if v is None else round(float(v), 2) for v in values]
    steps = same = 0
    for a, b in pairwise(cents):
        if a is not None and b is not None:
            steps += 1
            same += a == b
    return same / steps if steps else 0.0


def _holding(
    refs: Sequence[EntityRef], history: History, reference: Month
) -> tuple[np.ndarray | None, np.ndarray | None]:
    held = np.asarray([held_share(history[ref], reference) for ref in refs], dtype=float)
    if not (held > 0).any():
        return None, None
    current = np.asarray(
        [
            round(float(history[ref][max(m for m in history[ref] if m <= reference)]), 2)
            if held[e] > 0
            else np.nan
            for e, ref in enumerate(refs)
        ]
    )
    return held, current


def _tails(
    forecast: Forecast, levels: np.ndarray, refs: Sequence[EntityRef]
) -> tuple[float, float] | None:
    if forecast.level is None or not levels.size:
        return None
    tail = (1 - forecast.level) / 2
    if tail >= levels[0] - 1e-12:
        return None
    points = [p for ref in refs for p in forecast.points.get(ref, {}).values()]
    if any(p.lo is None or p.hi is None for p in points):
        return None
    return tail, 1 - tail


def reduce(values: np.ndarray, present: np.ndarray, aggregate: Aggregate) -> np.ndarray:
    """Reduce the last (months) axis of ``values`` over the ``present`` months."""
    if aggregate is Aggregate.MAX:
        return np.where(present, values, -np.inf).max(axis=-1)
    if aggregate is Aggregate.MIN:
        return np.where(present, values, np.inf).min(axis=-1)
    if aggregate is Aggregate.SUM:
        return np.where(present, values, 0.0).sum(axis=-1)
    if aggregate is Aggregate.MEDIAN:
        masked = np.where(present, values, np.nan)
        out = np.full(masked.shape[:-1], np.nan)
        some = ~np.isnan(masked).all(axis=-1)
        out[some] = np.nanmedian(masked[some], axis=-1)
        return out
    # MEAN, and VALUE / EACH over the one month they cover; NaN where no month is present
    total = np.where(present, values, 0.0).sum(axis=-1)
    count = np.broadcast_to(present, values.shape).sum(axis=-1)
    return np.divide(total, count, out=np.full(total.shape, np.nan), where=count > 0)


def draw_targets(
    table: WindowTable,
    aggregate: Aggregate,
    *,
    n: int = N_SCENARIOS,
    groups: Sequence[object] | None = None,
    seed: int = SEED,
    occurrence: np.ndarray | None = None,
) -> np.ndarray:
    """``[n, entities]``: each scenario's window target per entity.

    ``groups``: each entity's group (entities of one group share a shock of correlation
    ``SHARED_CORRELATION``); None treats every entity as its own group.
    ``occurrence``: per entity, the chance that a forecast month has a value at all (an
    entity sells in some months only); each scenario then keeps each forecast month with
    that chance, and an entity with no month kept has no target (NaN) in that scenario.
    """
    out = np.empty((n, len(table.refs)))
    # Seeded only when used (a generator costs ~15 µs to seed; a question draws 1–3 times).
    keep_rng = None if occurrence is None else np.random.default_rng(seed + 1)
    for start, drawn in _drawn(table, n, groups, seed):
        stop = start + drawn.shape[1]
        present = table.present[start:stop][None]
        if occurrence is not None and keep_rng is not None:
            kept = keep_rng.random(drawn.shape) < occurrence[start:stop, None]
            present = present & (kept | ~table.forecast[start:stop][None])
        out[:, start:stop] = reduce(drawn, present, aggregate)
    return out


def draw_months(table: WindowTable, *, n: int = N_SCENARIOS, seed: int = SEED) -> np.ndarray:
    """``[n, entities, months]``: each scenario's value per entity and window month.

    For small tables (one entity's months); a month without a value holds a placeholder.
    """
    return np.concatenate([drawn for _, drawn in _drawn(table, n, None, seed)], axis=1)


def draw_place_means(
    table: WindowTable,
    place_of: np.ndarray,
    n_places: int,
    *,
    n: int = N_SCENARIOS,
    groups: Sequence[object] | None = None,
    seed: int = SEED,
) -> np.ndarray:
    """``[n, places, months]``: per scenario, the mean of each place's entities that month.

    ``place_of[e]``: the place entity ``e`` belongs to (a district or city asked about as a
    whole, docs/design.md §4.1); NaN where none of its entities has a value that month.
    Entities of one ``groups`` group share a shock, as for ``draw_targets``; summed chunk
    by chunk, so a city's thousands of projects never sit in memory at once.
    """
    n_months = table.values.shape[1]
    total = np.zeros((n, n_places, n_months))
    count = np.zeros((n_places, n_months))
    for start, drawn in _drawn(table, n, groups, seed):
        stop = start + drawn.shape[1]
        present = table.present[start:stop]
        for place in range(n_places):
            mine = place_of[start:stop] == place
            if mine.any():
                kept = present[mine]
                total[:, place] += np.where(kept[None], drawn[:, mine], 0.0).sum(axis=1)
                count[place] += kept.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count[None] > 0, total / count[None], np.nan)


def _drawn(
    table: WindowTable, n: int, groups: Sequence[object] | None, seed: int
) -> Iterator[tuple[int, np.ndarray]]:
    """``(first entity, [n, chunk, months] values)`` chunk by chunk, in entity order.

    The draws' positions on the quantile grid depend on the table's shape only and are
    kept per shape (``foretab.analyze.draw_positions``); the values are read afresh.
    """
    shape = DrawShape.of(
        n=n,
        seed=seed,
        copula=copula(),
        values_shape=table.values.shape,
        levels=table.levels,
        groups=groups,
        horizon=table.horizon,
        chunk_cells=CHUNK_CELLS,
        block_cells=DRAW_BLOCK_CELLS,
    )
    # Its own stream: tables without held values draw exactly what they drew before.
    hold_rng = None if table.held is None else np.random.default_rng(seed + 2)
    for chunk in POSITIONS.positions(shape):
        start, stop = chunk.start, chunk.stop
        drawn = read_at(table.values[start:stop], chunk, DRAW_BLOCK_CELLS)
        if hold_rng is not None and table.current is not None:
            _hold(drawn, table, start, stop, hold_rng)
        yield start, drawn


def _hold(
    drawn: np.ndarray, table: WindowTable, start: int, stop: int, rng: np.random.Generator
) -> None:
    """In place: each entity's forecast months at its current value with chance ``held``."""
    assert table.held is not None and table.current is not None
    held = table.held[start:stop]
    if not (held > 0).any():
        return
    still = rng.random((drawn.shape[0], stop - start)) < held[None, :]
    cells = still[:, :, None] & table.forecast[start:stop][None]
    current = np.broadcast_to(table.current[start:stop][None, :, None], drawn.shape)
    drawn[cells] = current[cells]


def groups_of(refs: Sequence[EntityRef]) -> list[object] | None:
    """Each entity's group for shared shocks (its place: every level above it); None: off.

    An entity of a one-level corpus (no place above it) is its own group: the shared
    correlation was measured between projects of one district, not across a whole corpus.
    """
    chosen = copula()
    if chosen.shared <= 0 and chosen.outer <= 0:
        return None
    return [(ref.outer, ref.inner) if ref.outer or ref.inner else ref for ref in refs]


def interval(draws: np.ndarray, level: float) -> tuple[float, float]:
    """The central ``level`` interval of one target's scenario draws."""
    tail = (1 - level) / 2
    lo, hi = np.quantile(draws, [tail, 1 - tail])
    return float(lo), float(hi)
