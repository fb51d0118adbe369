"""``foretab bench corpus --answers``: the stated intervals of window and place answers.

``bench corpus`` scores each project-month's own interval. Questions also ask for a
project's highest price over a window and for a district's or city's mean price, whose
intervals come from the scenario draws (``foretab.analyze.scenarios``: months of a
project through a copula, shared shocks within a district and a city). This scores those
intervals on the corpus hold-out, through the engine itself: each question's plan is
answered by the store's engine (``Engine.answer``: read, forecast, the analyzer's
intervals) and by an oracle engine over the future store (the true answer, as the QA
dataset's gold), so the figures describe what users are told.

Kinds (``KINDS``), for every eligible subject and every window of R+1..R+12:

* ``window max Nm``: a project's highest monthly price over the next N months
  (projects with ≥ 6 observations in the 24 months to R, as ``bench corpus``);
* ``district month`` / ``city month``: a place's mean price in one future month (each of
  the 12), and the same by quarter of the horizon (``district month 1-3m`` … ``10-12m``:
  the months 1–3, …, 10–12 after R);
* ``district window Nm`` / ``city window Nm``: a place's mean price over the next N
  months (the mean over its candidates of each one's window mean).

A place's candidates are its projects observed in R−11..R (docs/design.md §4); a subject
without a true value (no month observed in the window) is skipped, as the QA builder
skips it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from foretab.analyze.scenarios import Copula
from foretab.core.months import Month
from foretab.core.plan import Aggregate, EntityRef, Plan
from foretab.errors import ForetabError

#: The windows scored, in months after R.
HORIZONS = (3, 6, 12)


@dataclass(frozen=True, slots=True)
class KindScore:
    """Coverage of one kind of answer's stated interval against the true answers."""

    kind: str
    n: int  # answers with an interval and a true value
    coverage: float
    mean_width: float
    #: the true value below the interval / above it (shares of ``n``)
    below: float
    above: float
    skipped: int  # questions without an interval or a true value


@dataclass(frozen=True, slots=True)
class AnswersBench:
    """``bench corpus --answers``: coverage per kind of answer at ``level``."""

    reference: str
    level: float
    copula: str
    kinds: tuple[KindScore, ...]
    seconds: float

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(slots=True)
class _Tally:
    lo: list[float]
    hi: list[float]
    truth: list[float]
    skipped: int = 0

    def add(self, lo: float, hi: float, truth: float) -> None:
        self.lo.append(lo)
        self.hi.append(hi)
        self.truth.append(truth)


def coverage(
    lo: Sequence[float], hi: Sequence[float], truth: Sequence[float]
) -> tuple[float, float, float, float]:
    """``(coverage, mean width, share below, share above)`` of ``[lo, hi]`` against ``truth``.

    NaN everywhere when there is nothing to score.
    """
    lo_, hi_, y = (np.asarray(v, dtype=float) for v in (lo, hi, truth))
    if not y.size:
        return (float("nan"),) * 4  # type: ignore[return-value]
    below = y < lo_
    above = y > hi_
    inside = ~(below | above)
    return float(inside.mean()), float(np.mean(hi_ - lo_)), float(below.mean()), float(above.mean())


def score(kind: str, tally: _Tally) -> KindScore:
    """``tally``'s coverage as a ``KindScore``."""
    cov, width, below, above = coverage(tally.lo, tally.hi, tally.truth)
    return KindScore(kind, len(tally.truth), cov, width, below, above, tally.skipped)


def bench_answers(
    db: str,
    *,
    level: float = 0.8,
    copulas: Sequence[Copula] = (Copula(),),
    future_source: object | None = None,
    limit: int | None = None,
    progress: Callable[[str, int, int], None] = lambda _k, _d, _t: None,
) -> list[AnswersBench]:
    """Score the intervals of window-max and place-mean answers on the store's hold-out.

    One result per copula of ``copulas`` (the scenarios' correlations): each question is
    read and forecast once, then analysed under each. ``future_source``: another forecast
    stage than the store's model (``build_engine``'s). ``limit``: at most this many
    projects, districts and cities (a quick look).
    """
    from foretab.analyze.answer import RuleAnalyzer
    from foretab.engine import build_engine

    started = time.perf_counter()
    model = build_engine(db, future="model", level=level, future_source=future_source)
    oracle = build_engine(db, future="oracle", level=level)
    analyzers = [RuleAnalyzer(copula=c) for c in copulas]
    try:
        reference = model.session.context.reference  # type: ignore[union-attr]
        projects, places = _subjects(model, reference)
        if limit is not None:
            projects = projects[:limit]
        tallies: dict[str, list[_Tally]] = {}

        def tally_of(kind: str) -> list[_Tally]:
            return tallies.setdefault(kind, [_Tally([], [], []) for _ in copulas])

        for horizon in HORIZONS:
            kind = f"window max {horizon}m"
            template = _project_template(model, projects[0], reference, horizon)
            for k, ref in enumerate(projects):
                _one(model, oracle, analyzers, replace(template, entities=(ref,)), tally_of(kind))
                if k % 500 == 0:
                    progress(kind, k, len(projects))
        for level_name, place_list in places_by_level(places):
            place_list = place_list if limit is None else place_list[:limit]
            for question, kinds in _place_questions(place_list, reference, level_name):
                try:
                    plan = model.parse(question)  # type: ignore[union-attr]
                except ForetabError:
                    for kind in kinds:
                        for tally in tally_of(kind):
                            tally.skipped += 1
                    continue
                _one(model, oracle, analyzers, plan, *(tally_of(kind) for kind in kinds))
            progress(level_name, len(place_list), len(place_list))
    finally:
        model.close()
        oracle.close()
    seconds = time.perf_counter() - started
    return [
        AnswersBench(
            reference.iso,
            level,
            described(copula),
            tuple(score(kind, tally[i]) for kind, tally in tallies.items()),
            seconds,
        )
        for i, copula in enumerate(copulas)
    ]


def described(copula: Copula) -> str:
    """The copula in the benchmark's words."""
    shocks = f"months {copula.months:g}, district {copula.shared:g}, city {copula.outer:g}"
    return (
        shocks
        + (f", fleeting {copula.fleeting:g}" if copula.fleeting else "")
        + (f", growth {copula.growth:g}" if copula.growth else "")
        + (f", shift {copula.shift:g}" if copula.shift else "")
    )


def _one(
    model: Any, oracle: Any, analyzers: Sequence[Any], plan: Plan, *kinds: list[_Tally]
) -> None:
    """Add ``plan``'s stated interval under each analyzer and its true answer to ``kinds``.

    The model engine's stages in ``Engine.answer``'s order (retrieve, read, forecast),
    then each analyzer on the same forecast; the oracle engine answers the same plan.
    Each of ``kinds`` (one tally per analyzer) counts it.
    """
    try:
        truth = oracle.answer(plan.question, plan)
        read = model.reader.read(plan, model.retriever.retrieve(plan))
        forecast = model.future.forecast(plan, read.history)
        told = [a.analyze(plan, read.history, forecast) for a in analyzers]
    except ForetabError:
        for tallies in kinds:
            for tally in tallies:
                tally.skipped += 1
        return
    for tallies in kinds:
        for tally, analysis in zip(tallies, told, strict=True):
            if not analysis.intervals or not truth.answer:
                tally.skipped += 1
                continue
            bound = analysis.intervals[0]
            tally.add(float(bound.lo), float(bound.hi), float(truth.answer[0][-1]))


def _subjects(engine: object, reference: Month) -> tuple[list[EntityRef], list[tuple[str, str]]]:
    """Projects scored for their window max, and the places ``(city, district or "")``.

    Projects: ≥ 6 observations in the 24 months to R (``bench corpus``'s rule; the
    window's truth decides the rest). Places: every district and city with a candidate
    (a project observed in R−11..R).
    """
    from foretab.bench.forecast.corpus import HISTORY_WINDOW, MIN_HISTORY_OBS
    from foretab.forecast.store import panel_arrays

    store = engine.session.store  # type: ignore[attr-defined]
    panel = panel_arrays(store.panel(), reference)
    recent = np.isfinite(panel.values[:, -HISTORY_WINDOW:]).sum(axis=1)
    projects = [r for r, n in zip(panel.entities, recent, strict=True) if n >= MIN_HISTORY_OBS]
    candidate = np.isfinite(panel.values[:, -12:]).any(axis=1)
    districts = sorted(
        {(r.outer, r.inner) for r, c in zip(panel.entities, candidate, strict=True) if c}
    )
    cities = sorted({city for city, _ in districts})
    return projects, [*districts, *((c, "") for c in cities)]


def places_by_level(
    places: Iterable[tuple[str, str]],
) -> list[tuple[str, list[tuple[str, str]]]]:
    """Districts first, then cities (a city's place has no district)."""
    listed = list(places)
    return [
        ("district", [p for p in listed if p[1]]),
        ("city", [p for p in listed if not p[1]]),
    ]


def _project_template(engine: object, ref: EntityRef, reference: Month, horizon: int) -> Plan:
    """The plan of "the highest price of a project over the next ``horizon`` months"."""
    first, last = reference + 1, reference + horizon
    question = (
        f"What will the highest monthly average price of {ref.name} in {ref.inner}, "
        f"{ref.outer} be from {first.label} to {last.label}?"
    )
    plan = engine.parse(question)  # type: ignore[attr-defined]
    if plan.aggregate is not Aggregate.MAX or len(plan.window.months) != horizon:
        raise ForetabError(f"the window-max template was planned as {plan.aggregate}: {question}")
    return plan


def _place_questions(
    places: Sequence[tuple[str, str]], reference: Month, level_name: str
) -> Iterable[tuple[str, tuple[str, ...]]]:
    """``(question, kinds)`` of every place's mean in each month and over each window.

    A month counts for its level's ``month`` kind and for its quarter of the horizon.
    """
    for city, district in places:
        where = f"{district}, {city}" if district else city
        for k in range(1, 13):
            month = reference + k
            quarter = 3 * ((k - 1) // 3)
            yield (
                f"What will the average price in {where} be in {month.label}?",
                (f"{level_name} month", f"{level_name} month {quarter + 1}-{quarter + 3}m"),
            )
        for horizon in HORIZONS:
            first, last = reference + 1, reference + horizon
            yield (
                f"What will the average price in {where} be from {first.label} to {last.label}?",
                (f"{level_name} window {horizon}m",),
            )
