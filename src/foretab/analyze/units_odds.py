"""Future units sold: each forecast number with its interval (issue 30).

The units model (``forecast.units_source``) gives each project-month a point and the 10% /
90% quantile boosters' ends, no joint distribution. So:

* one future month of one project: the 80% interval as the model gives it;
* a total over several future months, or over a scope's projects: the monthly ends added
  up, and said as that ("ends … added up"), never as an 80% interval of the total — the
  quantile of a sum is not the sum of the quantiles unless the months move together;
* past months in a window count as observed (they move neither end);
* a ranking of projects by future units: the point forecasts' ranking, and the text says
  that no probability is given (there is no distribution to take one from).
"""

from __future__ import annotations

from dataclasses import replace

from foretab.analyze.scope import in_scope
from foretab.core.months import Month
from foretab.core.plan import Aggregate, EntityRef, Language, Plan, ScopeOp
from foretab.core.series import Forecast, History
from foretab.core.stages import Analysis, AnswerInterval

#: Said after a total whose interval ends were added up month by month (and entity by
#: entity, for a scope), and what the trace records for it.
ADDED_ZH = "各项目各月80%区间上下限之和"
NO_PROBABILITY_EN = (
    "ranked on the units model's point forecasts; it gives no probability for a ranking"
)
NO_PROBABILITY_ZH = "按销量模型的点预测排名；排名不给出概率"


def with_units_intervals(
    plan: Plan, history: History, forecast: Forecast, point: Analysis
) -> Analysis:
    """``point`` (a future units answer on point forecasts) with its intervals."""
    if forecast.level is None:
        return point
    if plan.scopes:
        return _scope(plan, history, forecast, point)
    zh = plan.language is Language.ZH
    rows: list[tuple[str, float, float, bool]] = []  # (label, lo, hi, added up)
    intervals: list[AnswerInterval] = []
    if plan.aggregate is Aggregate.EACH:
        ref = plan.entities[0]
        for row, month in enumerate(
            m for m in plan.window.months if _has(history, forecast, ref, m)
        ):
            lo, hi, n = _bounds(plan, history, forecast, ref, (month,))
            if n:
                intervals.append(AnswerInterval(row, lo, hi))
                rows.append((_month(month, zh), lo, hi, False))
    else:
        for row, ref in enumerate(plan.entities):
            lo, hi, n = _bounds(plan, history, forecast, ref, tuple(plan.window.months))
            if n:
                intervals.append(AnswerInterval(row, lo, hi))
                rows.append((ref.display_name(plan.language), lo, hi, n > 1))
    if not rows:
        return point
    added = any(a for *_, a in rows)
    named = len(rows) > 1
    text = _said(
        plan,
        point.text,
        forecast.level,
        added,
        [(label if named else "", lo, hi) for label, lo, hi, _ in rows],
    )
    how = _added(plan) if added else "the units model's 10% and 90% quantile boosters"
    return replace(point, text=text, intervals=tuple(intervals), uncertainty=how)


def _scope(plan: Plan, history: History, forecast: Forecast, point: Analysis) -> Analysis:
    query = plan.scope
    assert query is not None
    zh = plan.language is Language.ZH
    if query.op is not ScopeOp.TOTAL:
        note = NO_PROBABILITY_ZH if zh else NO_PROBABILITY_EN
        return replace(point, text=_appended(point.text, zh, note), uncertainty=NO_PROBABILITY_EN)
    intervals, said = [], []
    for row, scope in enumerate(plan.scopes):
        lo = hi = 0.0
        n = 0
        for ref in sorted(r for r in plan.entities if in_scope(scope, r)):
            a, b, k = _bounds(plan, history, forecast, ref, tuple(plan.window.months))
            lo, hi, n = lo + a, hi + b, n + k
        if n:
            intervals.append(AnswerInterval(row, lo, hi))
            where = scope.name_zh if zh and scope.name_zh else scope.label
            said.append((where if len(plan.scopes) > 1 else "", lo, hi))
    if not intervals:
        return point
    text = _said(plan, point.text, forecast.level or 0.0, True, said)
    return replace(point, text=text, intervals=tuple(intervals), uncertainty=_added(plan))


def _has(history: History, forecast: Forecast, ref: EntityRef, month: Month) -> bool:
    return month in history[ref] or month in forecast.points.get(ref, {})


def _bounds(
    plan: Plan, history: History, forecast: Forecast, ref: EntityRef, months: tuple[Month, ...]
) -> tuple[float, float, int]:
    """The ends over ``months``: observed months as they are, forecast months' ends added.

    Also returns how many forecast months were added (0: nothing to bound).
    """
    lo = hi = 0.0
    n = 0
    points = forecast.points.get(ref, {})
    for month in months:
        if month > plan.reference_month and month in points:
            p = points[month]
            if p.lo is None or p.hi is None:
                return 0.0, 0.0, 0
            lo, hi, n = lo + round(p.lo, 2), hi + round(p.hi, 2), n + 1
        elif month in history[ref]:
            value = round(float(history[ref][month]), 2)
            lo, hi = lo + value, hi + value
    return round(lo, 2), round(hi, 2), n


def _month(month: Month, zh: bool) -> str:
    return f"{month.year}年{month.month}月" if zh else month.label


def _added(plan: Plan) -> str:
    return f"ends of the {plan.wording.entity}-month 80% intervals added up"


def _said(
    plan: Plan, text: str, level: float, added: bool, rows: list[tuple[str, float, float]]
) -> str:
    zh = plan.language is Language.ZH
    label = f"{level:.0%}"
    parts = [f"{name} {lo:,.0f}–{hi:,.0f}".strip() for name, lo, hi in rows]
    if zh:
        what = ADDED_ZH if added else f"{label}区间"
        return _appended(text, zh, f"{what}：{'；'.join(parts)}")
    what = _added(plan) if added else label
    return _appended(text, zh, f"{what}: {'; '.join(parts)}")


def _appended(text: str, zh: bool, note: str) -> str:
    if zh:
        return f"{text.rstrip('。')}（{note}）。"
    return f"{text.rstrip('.')} ({note})."
