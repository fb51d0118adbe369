"""Sampling and gold answers of the issue-10 families (``foretab.bench.qa.family_templates``).

Gold answers come from SQL written here against the stores (history attached as
``history``, future as ``future``), never from the engine: a scope's candidates are the
district's projects with a value for the metric in the window (for a future window, those
observed in R−11..R with a future value), a candidate's value the exact mean of its
rounded monthly prices in whole cents (``ROUND(SUM(cents) / COUNT)``, half away from zero
on an exactly representable half) or the sum of its units, ties to the first project in
name order. Project families reuse the classic answer SQL (``foretab.dataset.gold_sql``); a
threshold compares its target with the bound in SQL.
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace

import duckdb

from foretab.bench.qa.build import (
    HISTORY_WINDOW,
    SPLITS,
    BuildConfig,
    Corpus,
    Draft,
    Expression,
    Project,
    gold_item,
    pick_expression,
    rows_to_answer,
    tables_of,
)
from foretab.bench.qa.family_templates import (
    FAMILY_TEMPLATES,
    FamilyTemplate,
    Place,
    aggregate_of,
    render_family,
)
from foretab.bench.qa.templates import Template, WindowKind
from foretab.core.months import Month
from foretab.core.plan import ChangeMeasure, Comparison, Extreme, Language, Metric, ScopeOp, Task
from foretab.dataset.gold_sql import HISTORY_ALIAS, date_lit, lit
from foretab.dataset.items import QAItem
from foretab.store.naming import PROJECTS_TABLE

_MIN_CANDIDATES = 3  # a scope question needs something to rank


@dataclass(frozen=True, slots=True)
class Names:
    """Chinese names from the store's project list."""

    projects: dict[tuple[str, str, str], str]
    places: dict[tuple[str, str], Place]


def load_names(conn: duckdb.DuckDBPyConnection) -> Names:
    """The Chinese names of every project and place in the history store."""
    rows = conn.execute(
        f"SELECT city, district, project, project_zh, city_zh, district_zh "
        f"FROM {HISTORY_ALIAS}.{PROJECTS_TABLE}"
    ).fetchall()
    projects: dict[tuple[str, str, str], str] = {}
    places: dict[tuple[str, str], Place] = {}
    for city, district, project, project_zh, city_zh, district_zh in rows:
        projects[(city, district, project)] = str(project_zh or "")
        place = places.get((city, district))
        if place is None or (not place.outer_zh and city_zh):
            places[(city, district)] = Place(city, district, city_zh or "", district_zh or "")
    return Names(projects, places)


def family_items(
    conn: duckdb.DuckDBPyConnection,
    corpus: Corpus,
    exprs: list[Expression],
    splits: dict[str, list[Project]],
    config: BuildConfig,
    per_template: int,
) -> tuple[list[QAItem], int]:
    """Every family item of every split (in sampling order) and how many were dropped."""
    names = load_names(conn)
    rng = random.Random(f"foretab-families-{config.seed}")
    by_kind: dict[WindowKind, list[Expression]] = defaultdict(list)
    for expr in exprs:
        by_kind[expr.kind].append(expr)
    districts = _split_districts(corpus, config.seed)
    items: list[QAItem] = []
    dropped = 0
    seen: set[str] = set()
    for split in SPLITS:
        wanted = per_template * (config.train_factor if split == "train" else 1)
        for template in filter(corpus.applies, FAMILY_TEMPLATES):
            candidates = by_kind.get(template.window, [])
            made = 0
            for _ in range(wanted * config.attempts_per_item):
                if made >= wanted or not candidates:
                    break
                if template.is_scope:
                    item = _scope_item(
                        conn, corpus, names, template, split, districts, candidates, rng
                    )
                else:
                    item = _project_item(
                        conn, corpus, names, template, split, splits, candidates, rng
                    )
                if item is None:
                    dropped += 1
                    continue
                if item.id in seen:
                    continue
                seen.add(item.id)
                items.append(item)
                made += 1
    return items, dropped


def _split_districts(corpus: Corpus, seed: int) -> dict[str, list[tuple[str, str]]]:
    places = sorted({(p.ref.outer, p.ref.inner) for p in corpus.projects})
    random.Random(f"foretab-districts-{seed}").shuffle(places)
    n = len(places)
    cut1, cut2 = round(n * 0.6), round(n * 0.8)
    return {"train": places[:cut1], "val": places[cut1:cut2], "test": places[cut2:]}


def _district_projects(corpus: Corpus, city: str, district: str) -> list[Project]:
    return [p for p in corpus.projects if (p.ref.outer, p.ref.inner) == (city, district)]


# ---- scope ----------------------------------------------------------------------------------


def _scope_item(
    conn: duckdb.DuckDBPyConnection,
    corpus: Corpus,
    names: Names,
    template: FamilyTemplate,
    split: str,
    districts: dict[str, list[tuple[str, str]]],
    candidates: list[Expression],
    rng: random.Random,
) -> QAItem | None:
    pool = districts[split]
    if not pool:
        return None
    city, district = rng.choice(pool)
    place = names.places.get((city, district), Place(city, district))
    zh = template.language is Language.ZH
    if zh and not (place.outer_zh and place.inner_zh):
        return None
    expr = rng.choice(candidates)
    window = expr.window
    reference = corpus.reference
    future = template.task is not Task.HISTORY
    members = _district_projects(corpus, city, district)
    active = [
        p
        for p in members
        if (expr.months & p.future_months if future else expr.months & p.history_months)
        and (not future or any(reference.index - 11 <= m for m in p.history_months))
    ]
    if len(active) < _MIN_CANDIDATES:
        return None
    sides = {"history": corpus.history_tables, "future": corpus.future_tables}
    target = tables_of(
        sides["future" if future else "history"], city, district, window.first, window.last
    )
    lookback = tables_of(corpus.history_tables, city, district, reference - 11, reference)
    if not target or (future and not lookback):
        return None
    target_names = [f"{'future' if future else HISTORY_ALIAS}.{t}" for t, _ in target]
    active_names = [f"{HISTORY_ALIAS}.{t}" for t, _ in lookback] if future else []
    per = _per_project_sql(target_names, window.months, active_names, reference, place, zh)
    lo = hi = None
    if template.op is ScopeOp.FILTER:
        values = sorted(
            v
            for (v,) in conn.execute(
                f"WITH {per} SELECT cents / 100 FROM per WHERE cents IS NOT NULL"
            ).fetchall()
        )
        if len(values) < _MIN_CANDIDATES:
            return None
        lo = float(int(values[len(values) // 4] // 1000 * 1000))
        hi = float(int(-(-values[(3 * len(values)) // 4] // 1000) * 1000))
    sql = f"WITH {per} {_scope_answer(template, lo, hi)}"
    answer = rows_to_answer(conn.execute(sql).fetchall())
    if not answer:  # nothing in range, no sales: dropped rather than asked
        return None
    question = render_family(
        template, rng.randrange(len(template.phrasings)), expression=window.expression,
        first=window.first, last=window.last, place=place, form=rng.randrange(3), lo=lo, hi=hi,
    )  # fmt: skip
    # Golden history: what the engine reads for the scope (its window, or the lookback).
    hist_first, hist_last = (
        (reference - (HISTORY_WINDOW - 1), reference) if future else (window.first, window.last)
    )
    golden = tables_of(corpus.history_tables, city, district, hist_first, hist_last)
    h_sql = _scope_rows_sql([t for t, _ in golden], place, hist_first, hist_last)
    f_sql = (
        _scope_rows_sql([t for t, _ in target], place, window.first, window.last) if future else ""
    )
    key = "|".join(
        [template.template_id, window.first.iso, window.last.iso, city, district, str(lo), str(hi)]
    )
    return QAItem(
        id=f"{template.template_id.lower()}-{hashlib.sha1(key.encode()).hexdigest()[:10]}",
        split=split,
        template_id=template.template_id,
        task=template.task.value,
        question=question,
        projects=tuple(p.ref for p in active),
        months=tuple(m.iso for m in window.months),
        answer=answer,
        history_sql=h_sql,
        future_sql=f_sql,
        answer_sql=sql,
        table_captions=tuple(c for _, c in golden),
        tables=tuple(t for t, _ in golden),
        expression=window.expression,
        aggregate=aggregate_of(template, len(window.months)).value,
        comparison=Comparison.NONE.value,
        measure=ChangeMeasure.ABSOLUTE.value,
        reference_month=reference.iso,
        family=template.family,
        language=template.language.value,
    )  # fmt: skip


def _per_project_sql(
    tables: Sequence[str],
    months: Sequence[Month],
    active_tables: Sequence[str],
    reference: Month,
    place: Place,
    zh: bool,
) -> str:
    """``rows`` of the window and ``per``: one row per candidate project (cents, units, name)."""
    in_months = "(" + ", ".join(date_lit(m) for m in months) + ")"
    rows = " UNION ALL ".join(
        f"SELECT project_name, month, price, units_sold FROM {t} WHERE month IN {in_months}"
        for t in tables
    )
    active = ""
    if active_tables:  # a future window: projects observed in R-11..R only
        seen = " UNION ALL ".join(
            f"SELECT project_name FROM {t} WHERE month BETWEEN {date_lit(reference - 11)} "
            f"AND {date_lit(reference)}"
            for t in active_tables
        )
        active = f" WHERE project_name IN ({seen})"
    name = "COALESCE(NULLIF(z.project_zh, ''), p.project_name)" if zh else "p.project_name"
    return (
        f"rows AS ({rows}), "
        "grouped AS (SELECT project_name, ROUND(SUM(ROUND(price * 100)) / COUNT(price)) AS cents, "
        f"SUM(units_sold) AS units FROM rows{active} GROUP BY project_name), "
        f"per AS (SELECT p.project_name, p.cents, p.units, {name} AS name FROM grouped p "
        f"LEFT JOIN {HISTORY_ALIAS}.{PROJECTS_TABLE} z ON z.city = {lit(place.outer)} "
        f"AND z.district = {lit(place.inner)} AND z.project = p.project_name)"
    )


def _scope_answer(template: FamilyTemplate, lo: float | None, hi: float | None) -> str:
    order = "DESC" if template.extreme is Extreme.HIGHEST else "ASC"
    value = "units" if template.metric is Metric.UNITS else "cents"
    op = template.op
    if op is ScopeOp.PICK:
        return f"SELECT name FROM per WHERE {value} IS NOT NULL ORDER BY {value} {order}, project_name LIMIT 1"
    if op is ScopeOp.TOP:
        return f"SELECT name FROM per WHERE {value} IS NOT NULL ORDER BY {value} {order}, project_name LIMIT {template.n}"
    if op is ScopeOp.FILTER:
        return (
            f"SELECT name FROM per WHERE cents / 100 >= {lo} AND cents / 100 <= {hi} "
            "ORDER BY project_name"
        )
    if op is ScopeOp.TOP_THEN_PICK:
        return (
            "SELECT name FROM (SELECT * FROM per WHERE units IS NOT NULL "
            f"ORDER BY units DESC, project_name LIMIT {template.n}) AS top_n "
            f"WHERE cents IS NOT NULL ORDER BY cents {order}, project_name LIMIT 1"
        )
    if op is ScopeOp.MEAN:
        return (
            f"SELECT ROUND(SUM({value}) / COUNT({value})) / 100 FROM per WHERE {value} IS NOT NULL"
        )
    if op is ScopeOp.TOTAL:
        return "SELECT SUM(units) FROM per WHERE units IS NOT NULL"
    assert op is ScopeOp.COUNT
    return "SELECT COUNT(*) FROM per WHERE units > 0"


def _scope_rows_sql(tables: Sequence[str], place: Place, first: Month, last: Month) -> str:
    """Every row of the district's tables in ``first..last``, with its place (golden history)."""
    return (
        " UNION ALL ".join(
            f"SELECT {lit(place.outer)} AS city, {lit(place.inner)} AS district, project_name, "
            f"month, price, units_sold FROM {t} WHERE month BETWEEN {date_lit(first)} "
            f"AND {date_lit(last)}"
            for t in tables
        )
        + " ORDER BY project_name, month"
    )


# ---- one project ----------------------------------------------------------------------------


def _project_item(
    conn: duckdb.DuckDBPyConnection,
    corpus: Corpus,
    names: Names,
    template: FamilyTemplate,
    split: str,
    splits: dict[str, list[Project]],
    candidates: list[Expression],
    rng: random.Random,
) -> QAItem | None:
    pool = splits[split]
    if not pool:
        return None
    project = rng.choice(pool)
    ref = project.ref
    zh = template.language is Language.ZH
    place = names.places.get((ref.outer, ref.inner), Place(ref.outer, ref.inner))
    project_zh = names.projects.get((ref.outer, ref.inner, ref.name), "")
    if zh and not (place.outer_zh and place.inner_zh and project_zh):
        return None
    classic = _classic(template)
    expr = pick_expression(rng, classic, (project,), candidates)
    if expr is None:
        return None
    window = expr.window
    value = None
    if template.above is not None:
        current = conn.execute(_current_sql(corpus, ref.outer, ref.inner, ref.name)).fetchone()
        if not current or current[0] is None:
            return None
        # Round hundreds for prices in the thousands (real estate), whole units below.
        places = -2 if float(current[0]) >= 1_000 else 0
        value = round(float(current[0]) * rng.choice((0.95, 1.0, 1.05)), places)
    question = render_family(
        template, rng.randrange(len(template.phrasings)), expression=window.expression,
        first=window.first, last=window.last, place=place, project=ref.name,
        project_zh=project_zh, form=rng.randrange(2), value=value,
    )  # fmt: skip
    item = gold_item(conn, corpus, Draft(split, classic, (project,), expr, question))
    if item is None:
        return None
    answer = item.answer
    answer_sql = item.answer_sql
    if value is not None:
        word = ">" if template.above else "<"
        answer_sql = (
            f"SELECT CASE WHEN target {word} {value} THEN 'Yes' ELSE 'No' END "
            f"FROM ({item.answer_sql}) AS gold(target)"
        )
        answer = rows_to_answer(conn.execute(answer_sql).fetchall())
        if not answer:
            return None
    key = f"{item.id}|{template.template_id}|{value}"
    return replace(
        item,
        id=f"{template.template_id.lower()}-{hashlib.sha1(key.encode()).hexdigest()[:10]}",
        answer=answer,
        answer_sql=answer_sql,
        family=template.family,
        language=template.language.value,
    )


def _classic(template: FamilyTemplate) -> Template:
    """The family template as a classic one, for the classic gold SQL of one project."""
    return Template(
        template.template_id,
        template.description,
        template.task,
        aggregate_of(template, 1 if template.window in (WindowKind.PAST_MONTH, WindowKind.FUTURE_MONTH) else 2),
        template.window,
        False,
        template.phrasings,
        metric=template.metric,
        measure=template.change or ChangeMeasure.ABSOLUTE,
        change=template.change,
        which_month=template.which_month,
    )  # fmt: skip


def _current_sql(corpus: Corpus, city: str, district: str, project: str) -> str:
    """The project's current price: at R, else its latest month before (history)."""
    reference = corpus.reference
    tables = tables_of(corpus.history_tables, city, district, reference - 23, reference)
    rows = " UNION ALL ".join(
        f"SELECT month, price FROM {HISTORY_ALIAS}.{t} WHERE project_name = {lit(project)}"
        for t, _ in tables
    )
    return f"SELECT arg_max(price, month) FROM ({rows}) AS r WHERE month <= {date_lit(reference)}"
