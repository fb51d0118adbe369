"""Scope answers about the future: probabilities of picks and lists, intervals of means.

docs/design.md §4, scope table; the scenarios are those of ``foretab.analyze.scenarios``.

A scope's answer counts only the candidates with a value in the window, and many sell in
some months only: each scenario keeps a candidate's forecast month with the share of the
last 12 months in which it sold (``occurrence``), and a candidate keeping none has no
value in that scenario (it is in no list and ranks last).

A scope's candidates are many (a city's hundreds of entities), so only those that can
change the answer are drawn. A scenario's value never leaves its bounds
(``WindowTable.bounds``), so

* for "highest" / "top N", an entity whose highest possible value lies below the lowest
  possible values of candidates of which at least N sell is out of the top N; it is left
  out when the chance that fewer than N of them sell is below ``PRUNE_TOLERANCE``
  (likewise for "lowest" / "cheapest N");
* for a range, an entity whose bounds lie outside it is out of the list in every
  scenario, and one that surely sells with bounds inside is in it; only the others are
  drawn.

A scope's mean needs every candidate. To keep a question fast whatever the scope's
size, the scenario count is cut so that about ``SCENARIO_CELLS`` (scenario, entity, month)
cells are drawn (tens of milliseconds), never below a floor that keeps the Monte Carlo
error small: 1,000 scenarios for a probability (standard error at most 1.6 points), 500
for a mean's interval (the 10% / 90% quantiles of a near-normal mean then err by about
6% of the interval's half-width).

Units sold are not forecast (the planner refuses future units questions, so "best-selling"
and totals of units never reach here).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from foretab.analyze import scenarios
from foretab.analyze.calibration import how_stated, stated
from foretab.analyze.intervals import around, said_with_interval, target_interval
from foretab.analyze.scenarios import (
    N_SCENARIOS,
    draw_targets,
    groups_of,
    has_distribution,
    interval,
    window_table,
)
from foretab.analyze.scope import analyze_scope, scope_values
from foretab.analyze.values import percent, probability_text, with_assumption
from foretab.core.plan import (
    Aggregate,
    EntityRef,
    Extreme,
    Language,
    Metric,
    Plan,
    ScopeOp,
    ScopeQuery,
)
from foretab.core.series import Forecast, History, ScopeOutcome
from foretab.core.stages import Analysis, AnswerInterval

SCENARIO_CELLS = 500_000
#: A top-N candidate is drawn unless its chance of changing the answer is below this
#: (far below the Monte Carlo error of 1,000 draws, 1.6 points).
PRUNE_TOLERANCE = 1e-4
MIN_SCENARIOS_PROBABILITY = 1_000
MIN_SCENARIOS_INTERVAL = 500
#: picks, rankings and ranges: the answer is categorical, as for named entities
_CATEGORICAL = (ScopeOp.PICK, ScopeOp.TOP, ScopeOp.FILTER)


@dataclass(frozen=True, slots=True)
class _Scope:
    """One scope's candidates (catalog order), their point targets and the point answer."""

    refs: tuple[EntityRef, ...]
    points: np.ndarray
    picked: tuple[EntityRef, ...]


def decide_scope(
    plan: Plan, history: History, forecast: Forecast, point: Analysis, rule: str
) -> Analysis:
    """``point`` (the scope answer on point forecasts) with its probability or interval."""
    query = plan.scope
    assert query is not None
    if plan.is_past or query.metric is not Metric.VALUE or query.rank_by is not Metric.VALUE:
        return point  # past windows are exact; units are never forecast
    if query.op is ScopeOp.EACH:
        return _each_interval(plan, history, forecast, point)
    scopes = _scopes(plan, history, forecast)
    refs = sorted({ref for s in scopes for ref in s.refs})
    if not refs or not has_distribution(forecast, refs):
        return point
    if query.op is ScopeOp.MEAN:
        return _mean_interval(plan, history, forecast, point, scopes, refs)
    if query.op not in _CATEGORICAL:
        return point
    return _categorical(plan, history, forecast, point, scopes, rule)


def _scopes(plan: Plan, history: History, forecast: Forecast) -> list[_Scope]:
    """Each scope's candidates and point answer, by the rules of ``analyze.scope``."""
    query = plan.scope
    assert query is not None
    future = forecast.values()
    out = []
    for scope in plan.scopes:
        values = scope_values(plan, scope, Metric.VALUE, history.series, future)
        refs = tuple(ref for ref, _ in values)
        points = np.asarray([v for _, v in values], dtype=float)
        if query.op is ScopeOp.FILTER:
            picked = tuple(r for r, v in values if _inside(query.low, query.high, v))
        else:
            n = 1 if query.op is ScopeOp.PICK else query.n
            order = _order(points, query.extreme)
            picked = tuple(refs[i] for i in order[:n])
        out.append(_Scope(refs, points, picked))
    return out


def _inside(low: float | None, high: float | None, value: np.ndarray | float) -> np.ndarray:
    inside = np.ones_like(np.asarray(value, dtype=float), dtype=bool)
    if low is not None:
        inside &= np.asarray(value) >= low
    if high is not None:
        inside &= np.asarray(value) <= high
    return inside


def _order(values: np.ndarray, extreme: Extreme, axis: int = -1) -> np.ndarray:
    # Stable: equal values keep catalog order, so ties go to the first entity (docs/design.md §4).
    key = -values if extreme is Extreme.HIGHEST else values
    return np.argsort(key, axis=axis, kind="stable")


def _top_sets(draws: np.ndarray, extreme: Extreme, n: int) -> np.ndarray:
    """``[scenarios, n]``: each scenario's top ``n`` columns, as a sorted set."""
    key = -draws if extreme is Extreme.HIGHEST else draws
    if n == 1:
        return key.argmin(axis=1)[:, None]  # first index on ties: catalog order
    # Ties at the n-th place are rare in continuous draws; argpartition is much cheaper
    # than a full sort of every scenario's hundreds of candidates.
    if n < draws.shape[1]:
        return np.sort(np.argpartition(key, n - 1, axis=1)[:, :n], axis=1)
    return np.tile(np.arange(n), (draws.shape[0], 1))


def _scenarios(cells: int, floor: int) -> int:
    """How many scenarios to draw for ``cells`` (entity, month) cells (module docstring)."""
    return int(min(N_SCENARIOS, max(floor, SCENARIO_CELLS // max(cells, 1))))


# --- the scope's mean ----------------------------------------------------------------------


def _mean_interval(
    plan: Plan,
    history: History,
    forecast: Forecast,
    point: Analysis,
    scopes: list[_Scope],
    refs: list[EntityRef],
) -> Analysis:
    if forecast.level is None or not all(s.refs for s in scopes):
        return point
    table = window_table(plan, refs, history, forecast)
    n = _scenarios(len(refs) * len(plan.window.months), MIN_SCENARIOS_INTERVAL)
    draws = draw_targets(
        table,
        Aggregate.MEAN,
        n=n,
        groups=groups_of(refs),
        occurrence=occurrence(plan, refs, history),
    )
    column = {ref: j for j, ref in enumerate(refs)}
    label = f"{forecast.level:.0%}"
    text, cursor = point.text, 0
    intervals = []
    for row, scope in enumerate(scopes):
        sub = draws[:, [column[r] for r in scope.refs]]
        valued = np.isfinite(sub)
        # The mean over the candidates that sell in each scenario (one that sells nothing
        # is no candidate); a scenario where none sells has no mean.
        count = valued.sum(axis=1)
        total = np.where(valued, sub, 0.0).sum(axis=1)
        means = total[count > 0] / count[count > 0]
        if not means.size:
            continue
        value = float(point.answer[row][0])
        lo, hi = around(value, *interval(means, forecast.level))
        intervals.append(AnswerInterval(row, lo, hi))
        text, cursor = said_with_interval(text, cursor, value, (lo, hi), label, plan)
    how = (
        f"interval of the mean over {len(refs):,} candidates (each with a value in a month "
        "as often as in the last 12): quantiles of the mean in " + scenarios.described(n)
    )
    return replace(point, text=text, intervals=tuple(intervals), uncertainty=how)


def _each_interval(plan: Plan, history: History, forecast: Forecast, point: Analysis) -> Analysis:
    """Every project's own interval, as a named project's (rows in ``analyze.scope`` order)."""
    if forecast.level is None:
        return point
    label = f"{forecast.level:.0%}"
    text, cursor, row = point.text, 0, 0
    intervals, hows = [], []
    for scope in plan.scopes:
        for ref, value in scope_values(
            plan, scope, Metric.VALUE, history.series, forecast.values()
        ):
            found = target_interval(
                plan, ref, plan.window.months, Aggregate.MEAN, history, forecast
            )
            if found is not None:
                lo, hi = around(value, found[0], found[1])
                intervals.append(AnswerInterval(row, lo, hi))
                text, cursor = said_with_interval(text, cursor, value, (lo, hi), label, plan)
                hows += [found[2]] if found[2] not in hows else []
            row += 1
    return replace(point, text=text, intervals=tuple(intervals), uncertainty="; ".join(hows))


# --- picks, top N, ranges ------------------------------------------------------------------


def _categorical(
    plan: Plan,
    history: History,
    forecast: Forecast,
    point: Analysis,
    scopes: list[_Scope],
    rule: str,
) -> Analysis:
    query = plan.scope
    assert query is not None
    bounds_table = window_table(
        plan, sorted({r for s in scopes for r in s.refs}), history, forecast
    )
    low, high = bounds_table.bounds(Aggregate.MEAN)
    every = occurrence(plan, bounds_table.refs, history)
    # The chance that each candidate sells in the window at all (some month kept).
    months = bounds_table.forecast.sum(axis=1)
    fixed = (bounds_table.present & ~bounds_table.forecast).any(axis=1)
    valued = np.where(fixed, 1.0, 1.0 - (1.0 - every) ** months)
    sure = {ref: bool(valued[i] >= 1.0) for i, ref in enumerate(bounds_table.refs)}
    chance = {ref: float(valued[i]) for i, ref in enumerate(bounds_table.refs)}
    bound = {ref: (low[i], high[i]) for i, ref in enumerate(bounds_table.refs)}
    # Which candidates can change each scope's answer (the module docstring).
    live = [_live(query, s, bound, chance) for s in scopes]
    drawn = sorted({ref for refs in live for ref in refs})
    n = _scenarios(len(drawn) * len(plan.window.months), MIN_SCENARIOS_PROBABILITY)
    draws = np.empty((n, 0))
    if drawn:
        table = window_table(plan, drawn, history, forecast)
        kept = occurrence(plan, drawn, history)
        draws = draw_targets(table, Aggregate.MEAN, n=n, groups=groups_of(drawn), occurrence=kept)
    column = {ref: j for j, ref in enumerate(drawn)}
    point_hits, best_hits, chosen = [], [], []
    for scope, refs in zip(scopes, live, strict=True):
        sub = draws[:, [column[r] for r in refs]]
        hits = _answers(query, scope, refs, sub, bound, sure)
        point_hits.append(hits[scope.picked])
        best = max(hits, key=lambda answer: (hits[answer].sum(), answer == scope.picked))
        best_hits.append(hits[best])
        chosen.append(best)
    p_point = float(np.logical_and.reduce(point_hits).mean())
    p_best = float(np.logical_and.reduce(best_hits).mean())
    how = (
        f"probability of the whole answer: share of {scenarios.described(n)}; "
        f"{len(drawn):,} of {len(bound):,} candidates drawn (the others cannot change it), "
        f"{how_stated(plan)}"
    )
    zh = plan.language is Language.ZH
    share_point, share_best = p_point, p_best
    # Decided on the scenario shares above; stated calibrated (monotone: same order).
    p_point, p_best = stated(plan, share_point), stated(plan, share_best)
    if rule == "point" or share_best <= share_point or chosen == [s.picked for s in scopes]:
        kept = probability_text(point.text, p_point, zh)
        return replace(
            point,
            text=kept,
            probability=p_point,
            scenario_share=share_point,
            decision=rule,
            uncertainty=how,
        )
    outcomes = [
        ScopeOutcome(len(s.refs), tuple((r, float(s.points[s.refs.index(r)])) for r in picks))
        for s, picks in zip(scopes, chosen, strict=True)
    ]
    answer = with_assumption(plan, analyze_scope(plan, {}, {}, {}, outcomes))
    other = "；".join if zh else "; ".join
    names = other(_names(plan, s.picked, zh) for s in scopes)
    if zh:
        text = (
            f"{answer.text.rstrip('。')}（最可能的答案，概率 {percent(p_best)}；仅按点预测为 {names}，"
            f"概率 {percent(p_point)}）。"
        )
    else:
        text = (
            f"{answer.text.rstrip('.')} — the most probable answer ({percent(p_best)}); the point "
            f"forecasts alone give {names} ({percent(p_point)})."
        )
    return Analysis(answer.answer, text, p_best, rule, scenario_share=share_best, uncertainty=how)


def _live(
    query: ScopeQuery,
    scope: _Scope,
    bound: Mapping[EntityRef, tuple[float, float]],
    valued: Mapping[EntityRef, float],
) -> tuple[EntityRef, ...]:
    """The candidates of ``scope`` whose draws can change its answer.

    ``valued``: the chance that the candidate sells in the window at all. For a range,
    only one that surely sells and whose bounds lie inside is surely listed. For the top
    N, a candidate is left out when, with probability below ``PRUNE_TOLERANCE``, fewer
    than N of the candidates whose lowest possible value beats its highest sell: the
    prefixes are nested, so the answer's probability errs by at most that tolerance.
    """
    low = np.asarray([bound[r][0] for r in scope.refs])
    high = np.asarray([bound[r][1] for r in scope.refs])
    chance = np.asarray([valued[r] for r in scope.refs])
    certain = chance >= 1.0
    if query.op is ScopeOp.FILTER:
        sure_in = _inside(query.low, query.high, low) & _inside(query.low, query.high, high)
        sure_out = np.zeros(len(scope.refs), dtype=bool)
        if query.low is not None:
            sure_out |= high < query.low
        if query.high is not None:
            sure_out |= low > query.high
        keep = ~((sure_in & certain) | sure_out)  # not selling is out of the list too
    else:
        n = 1 if query.op is ScopeOp.PICK else query.n
        highest = query.extreme is Extreme.HIGHEST
        # Candidates ordered from the best lowest bound down: a candidate is beaten in
        # every scenario by each candidate of that order's prefix whose lowest bound beats
        # its highest one, whenever that candidate sells.
        best = -low if highest else high
        order = np.argsort(best, kind="stable")
        beaten_by = np.searchsorted(best[order], -high if highest else low, side="left")
        keep = _fewer_than(n, chance[order])[beaten_by] >= PRUNE_TOLERANCE
    return tuple(r for r, k in zip(scope.refs, keep, strict=True) if k)


def _fewer_than(n: int, chances: np.ndarray) -> np.ndarray:
    """``[k]`` for k = 0..len: the chance that fewer than ``n`` of the first k sell."""
    # The Poisson-binomial count of sellers in a growing prefix, capped at n.
    dist = np.zeros(n + 1)
    dist[0] = 1.0
    out = np.empty(chances.size + 1)
    out[0] = 1.0
    for k, p in enumerate(chances, start=1):
        moved = dist * p
        dist = dist * (1 - p)
        dist[1:] += moved[:-1]
        dist[-1] += moved[-1]
        out[k] = dist[:n].sum()
    return out


def _answers(
    query: ScopeQuery,
    scope: _Scope,
    refs: tuple[EntityRef, ...],
    draws: np.ndarray,
    bound: Mapping[EntityRef, tuple[float, float]],
    sure: Mapping[EntityRef, bool],
) -> dict[tuple[EntityRef, ...], np.ndarray]:
    """Candidate answers of one scope → which scenarios give exactly that answer.

    The candidates: the point answer, the most frequent answer of the scenarios and, for
    a range, the entities each more likely in than out (the most probable list when
    entities are independent).
    """
    n_scen = draws.shape[0]
    if query.op is ScopeOp.FILTER:
        surely_in = tuple(
            r
            for r in scope.refs
            if r not in refs and sure[r] and bool(_inside(query.low, query.high, bound[r][0]))
        )
        inside = _inside(query.low, query.high, draws)  # [scenarios, live]; NaN (no sale): out
        sets = {scope.picked}
        majority = tuple(r for r, p in zip(refs, inside.mean(axis=0), strict=True) if p > 0.5)
        sets.add(_catalog(surely_in + majority, scope))
        if refs:
            rows, counts = np.unique(np.packbits(inside, axis=1), axis=0, return_counts=True)
            mode = np.unpackbits(rows[int(np.argmax(counts))])[: len(refs)].astype(bool)
            sets.add(
                _catalog(surely_in + tuple(r for r, k in zip(refs, mode, strict=True) if k), scope)
            )
        hits = {}
        for answer in sets:
            wanted = np.asarray([r in answer for r in refs], dtype=bool)
            ok = set(surely_in) <= set(answer) and set(answer) <= set(surely_in) | set(refs)
            hits[answer] = (
                (inside == wanted[None, :]).all(axis=1) if ok else np.zeros(n_scen, dtype=bool)
            )
        return hits
    n = min(1 if query.op is ScopeOp.PICK else query.n, len(refs))
    # A candidate that sells nothing in a scenario ranks last there; a scenario with fewer
    # than n selling has a shorter answer than any n-long one.
    missing = np.isnan(draws)
    filled = np.where(missing, -np.inf if query.extreme is Extreme.HIGHEST else np.inf, draws)
    enough = (~missing).sum(axis=1) >= n
    top = _top_sets(filled, query.extreme, n)
    rows, counts = np.unique(top, axis=0, return_counts=True)
    position = {r: k for k, r in enumerate(refs)}
    order = _order(scope.points, query.extreme)
    rank = {scope.refs[i]: k for k, i in enumerate(order)}

    def as_answer(row: np.ndarray) -> tuple[EntityRef, ...]:
        # Shown in the point forecasts' order (the answer lists a ranking).
        return tuple(sorted((refs[k] for k in row), key=rank.__getitem__))

    hits = {}
    for answer in {scope.picked, as_answer(rows[int(np.argmax(counts))])}:
        if all(r in position for r in answer) and len(answer) == n:
            wanted = np.sort([position[r] for r in answer])
            hits[answer] = (top == wanted[None, :]).all(axis=1) & enough
        else:
            hits[answer] = np.zeros(n_scen, dtype=bool)
    return hits


def _catalog(refs: Sequence[EntityRef], scope: _Scope) -> tuple[EntityRef, ...]:
    chosen = set(refs)
    return tuple(r for r in scope.refs if r in chosen)


def _names(plan: Plan, refs: Sequence[EntityRef], zh: bool) -> str:
    names = [r.display_name(plan.language) for r in refs]
    if not names:
        return "无" if zh else "none"
    return "、".join(names) if zh else ", ".join(names)


def occurrence(plan: Plan, refs: Sequence[EntityRef], history: History) -> np.ndarray:
    """Per entity, the share of the 12 months up to R with a value: how often it sells.

    A scope's answer counts only the entities with a value in the window, and many sell in
    some months only (on the QA val split, a third of the future picks had no sale then).
    """
    first = plan.reference_month - 11
    return np.asarray(
        [sum(1 for m in history[ref] if first <= m <= plan.reference_month) / 12 for ref in refs]
    )
