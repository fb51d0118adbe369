"""``foretab bench build``: ODTQA-FoRe-style QA pairs from a store (paper §3, appendix A).

Steps, as in the paper:

1. projects pass the filter — at least ``min_history_months`` observed months in the 24
   months up to R (R-23..R) and at least one observed future month — and are split 6:2:2 at
   project level with a seeded shuffle, so no project appears in two splits;
2. per split and template, projects (one, or 2–3 from one district) and a time expression are
   sampled; an expression is eligible only when every one of its months is in the future
   store for every project of the question (history templates: in the history store);
3. the question is rendered from one of the template's phrasings, and the gold history,
   future and answer SQL are generated together;
4. the answer SQL is executed on the stores in the builder's own read-only connection
   (history attached as ``history``, future as ``future``) — the gold path never touches the
   analyzer; items whose SQL returns nothing or whose future rows miss a month are dropped,
   and duplicates (same template, projects and months) are removed.

Only DuckDB stores are supported here: PostgreSQL keeps history and future in two databases,
which one connection cannot join.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from foretab.bench.qa.family_templates import FAMILY_TEMPLATES, FamilyTemplate
from foretab.bench.qa.schema_sql import ColumnRenames, RenamingConnection
from foretab.bench.qa.templates import TEMPLATES, Template, WindowKind, render
from foretab.core.months import MONTH_NAMES, Month
from foretab.core.plan import EntityRef, Metric, Task, TimeWindow
from foretab.corpus.schema import CorpusSchema, SchemaError, default_schema
from foretab.dataset.gold_sql import answer_sql, future_sql, history_sql, lit
from foretab.dataset.items import AnswerRows, QAItem, write_items
from foretab.errors import ForetabError
from foretab.store.location import StoreLocation
from foretab.store.naming import CATALOG_TABLE, META_TABLE, SCHEMA_KEY

SPLITS = ("train", "val", "test")
HISTORY_WINDOW = 24
#: DuckDB threads of the builder's connection (its gold statements are small).
BUILD_THREADS = 1
# Past expressions that do not read well in a past-tense question ("What was ... now?").
_PRESENT_ONLY = frozenset({"now", "currently"})

Progress = Callable[[int, int], None]


class BenchBuildError(ForetabError):
    """The QA dataset cannot be built from this store."""


@dataclass(frozen=True, slots=True)
class BuildConfig:
    """Knobs of the builder; the defaults give a test split of about 1,500 questions."""

    seed: int = 0
    test_size: int = 1500
    train_factor: int = 3  # train gets 3x the questions of val / test (6:2:2 projects)
    min_history_months: int = 6
    max_projects: int = 3
    attempts_per_item: int = 60
    # "all": the classic templates, then the issue-10 families (scope, threshold, which
    # month, units, change; English and Chinese); "odtqa": the classic templates only
    # (the items are byte-identical either way).
    families: str = "all"

    def __post_init__(self) -> None:
        if self.families not in ("all", "odtqa"):
            raise BenchBuildError(
                f"unknown template set {self.families!r}; use `--families all` or "
                "`--families odtqa`"
            )


@dataclass(frozen=True, slots=True)
class BuildSummary:
    """What ``build_dataset`` wrote."""

    out_dir: Path
    counts: dict[str, int]
    projects: dict[str, int]
    templates: int
    time_expressions: int
    dropped: int


@dataclass(frozen=True, slots=True)
class Project:
    ref: EntityRef
    history_months: frozenset[int]  # Month.index values in R-23..R
    future_months: frozenset[int]


@dataclass(frozen=True, slots=True)
class Expression:
    window: TimeWindow
    kind: WindowKind
    style: str
    months: frozenset[int]


@dataclass(slots=True)
class Corpus:
    reference: Month
    history_tables: dict[tuple[str, str, int], tuple[str, str]]  # (city, district, year)
    future_tables: dict[tuple[str, str, int], tuple[str, str]]
    projects: list[Project] = field(default_factory=list)
    schema: CorpusSchema = field(default_factory=default_schema)

    def applies(self, template: Template | FamilyTemplate) -> bool:
        """Whether the corpus can answer ``template``'s questions (units, scopes)."""
        if template.metric is Metric.UNITS and self.schema.summed is None:
            return False
        return not (getattr(template, "is_scope", False) and not self.schema.groups)


def _store_schema(conn: duckdb.DuckDBPyConnection, location: StoreLocation) -> CorpusSchema:
    row = conn.execute(
        f"SELECT value FROM history.{META_TABLE} WHERE key = ?", [SCHEMA_KEY]
    ).fetchone()
    if not row or not row[0]:
        return default_schema()
    try:
        return CorpusSchema.from_json(str(row[0]), location.describe("history"))
    except SchemaError as exc:
        raise BenchBuildError(exc.message) from None


def default_expressions(reference: Month) -> list[TimeWindow]:
    """The parser's canonical time expressions (the single source for the builder)."""
    from foretab.parse.timexpr import catalog

    return catalog(reference)


def build_dataset(
    db: str,
    out_dir: str | Path,
    config: BuildConfig = BuildConfig(),
    *,
    expressions: Sequence[TimeWindow] | None = None,
    progress: Progress | None = None,
) -> BuildSummary:
    """Build ``out_dir/{train,val,test}.jsonl`` and ``out_dir/manifest.json`` from ``db``."""
    location = StoreLocation.parse(db)
    if location.backend != "duckdb":
        raise BenchBuildError(
            f"`foretab bench build` supports DuckDB stores only, not {location.describe()}: "
            "the gold answer SQL joins the history and future stores in one connection. "
            "Ingest the same file with `--db corpus.duckdb` to build the dataset."
        )
    for path in (location.history, location.future):
        if not Path(path).is_file():
            raise BenchBuildError(
                f"Store file {path} not found. Create the stores with "
                "`foretab ingest PATH --db DB --reference-month YYYY-MM`."
            )
    # One thread: the builder runs tens of thousands of small gold statements, for which
    # DuckDB's second thread costs more in hand-offs than it saves (the real corpus's
    # build: 13-18% less CPU, docs/benchmarks/qa.md).
    raw = duckdb.connect(config={"threads": BUILD_THREADS})
    try:
        raw.execute(f"ATTACH {lit(location.history)} AS history (READ_ONLY)")
        raw.execute(f"ATTACH {lit(location.future)} AS future (READ_ONLY)")
        schema = _store_schema(raw, location)
        renames = ColumnRenames.of(schema.columns)
        # The templates' SQL names the default schema's columns; run it over this store's.
        conn: Any = RenamingConnection(raw, renames)
        corpus = _load_corpus(conn, config)
        corpus.schema = schema
        windows = (
            list(expressions) if expressions is not None else default_expressions(corpus.reference)
        )
        exprs = _classify(windows, corpus.reference)
        if not any(e.kind is WindowKind.FUTURE_MONTH for e in exprs):
            raise BenchBuildError(
                "No forward-looking one-month time expression (e.g. 'next month') in the "
                "expression catalog; check foretab.parse.timexpr.catalog."
            )
        splits = _split_projects(corpus.projects, config.seed)
        drafts = _sample(corpus, exprs, splits, config)
        items, dropped = _execute(conn, corpus, drafts, progress)
        extra: list[QAItem] = []
        if config.families == "all":
            from foretab.bench.qa.families import family_items

            extra, more = family_items(conn, corpus, exprs, splits, config, _per_template(config))
            dropped += more
    finally:
        raw.close()
    items = [renames.item(i) for i in items]
    extra = [renames.item(i) for i in extra]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    counts = {}
    order = random.Random(config.seed + 1)
    family_order = random.Random(f"foretab-families-order-{config.seed}")
    for split in SPLITS:
        # Shuffled, so that `bench run --limit N` takes a mix of every template; the
        # families follow the classic items (their own shuffle leaves those unchanged).
        chosen = [i for i in items if i.split == split]
        order.shuffle(chosen)
        added = [i for i in extra if i.split == split]
        family_order.shuffle(added)
        counts[split] = write_items(out / f"{split}.jsonl", chosen + added)
    items = items + extra
    manifest = _manifest(location, corpus, exprs, splits, items, config, dropped)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    return BuildSummary(
        out_dir=out,
        counts=counts,
        projects={s: len(splits[s]) for s in SPLITS},
        templates=sum(map(corpus.applies, TEMPLATES))
        + (sum(map(corpus.applies, FAMILY_TEMPLATES)) if config.families == "all" else 0),
        time_expressions=len(exprs),
        dropped=dropped,
    )


# ---- corpus --------------------------------------------------------------------------------


def _load_corpus(conn: duckdb.DuckDBPyConnection, config: BuildConfig) -> Corpus:
    meta = dict(conn.execute(f"SELECT key, value FROM history.{META_TABLE}").fetchall())
    ref_text = str(meta.get("reference_month") or "")
    if not ref_text:
        raise BenchBuildError(
            "The store has no reference month, so it has no future to ask about. Re-ingest "
            "with `foretab ingest PATH --db DB --reference-month YYYY-MM`."
        )
    reference = Month.parse(ref_text)
    tables: dict[str, dict[tuple[str, str, int], tuple[str, str]]] = {}
    for side in ("history", "future"):
        rows = conn.execute(
            f"SELECT table_name, caption, city, district, year FROM {side}.{CATALOG_TABLE}"
        ).fetchall()
        tables[side] = {(str(c), str(d), int(y)): (str(t), str(cap)) for t, cap, c, d, y in rows}
    corpus = Corpus(reference, tables["history"], tables["future"])
    first = reference - (HISTORY_WINDOW - 1)
    observed: dict[str, dict[tuple[str, str, str], set[int]]] = {}
    for side in ("history", "future"):
        seen: dict[tuple[str, str, str], set[int]] = defaultdict(set)
        parts = [
            f"SELECT {lit(city)}, {lit(district)}, project_name, month FROM {side}.{table}"
            for (city, district, _), (table, _) in tables[side].items()
        ]
        if parts:
            for city, district, project, month in conn.execute(
                " UNION ALL ".join(parts)
            ).fetchall():
                index = Month.from_date(month).index
                if side == "history" and not first.index <= index <= reference.index:
                    continue
                seen[(str(city), str(district), str(project))].add(index)
        observed[side] = seen
    for key in sorted(observed["history"]):
        hist = observed["history"][key]
        fut = observed["future"].get(key, set())
        if len(hist) >= config.min_history_months and fut:
            corpus.projects.append(Project(EntityRef(*key), frozenset(hist), frozenset(fut)))
    if not corpus.projects:
        raise BenchBuildError(
            f"No project has {config.min_history_months}+ observed months in the 24 months up "
            f"to {reference} and an observed month after it; nothing to ask about."
        )
    return corpus


_STYLE_NUMBER = re.compile(
    r"\b(\d+|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|first|second|third|"
    r"fourth|last)\b"
)
_STYLE_MONTH = re.compile(r"\b(" + "|".join(MONTH_NAMES) + r")\b")


def _style(expression: str) -> str:
    # Expressions that differ only in numbers or month names share a style; sampling picks a
    # style first so the 130-odd "from May to July 2022" ranges do not swamp "next quarter".
    text = _STYLE_MONTH.sub("<M>", expression)
    return _STYLE_NUMBER.sub("<N>", text)


def _classify(windows: Sequence[TimeWindow], reference: Month) -> list[Expression]:
    result: list[Expression] = []
    seen: set[str] = set()
    for window in windows:
        text = window.expression.strip()
        if not text or text in seen:
            continue
        seen.add(text)
        one = window.first == window.last
        if reference < window.first and window.last <= reference + 12:
            kind = WindowKind.FUTURE_MONTH if one else WindowKind.FUTURE_SPAN
        elif reference - (HISTORY_WINDOW - 1) <= window.first and window.last <= reference:
            if text.lower() in _PRESENT_ONLY:
                continue
            kind = WindowKind.PAST_MONTH if one else WindowKind.PAST_SPAN
        else:
            continue
        months = frozenset(m.index for m in window.months)
        result.append(Expression(window, kind, _style(text), months))
    return result


def _split_projects(projects: list[Project], seed: int) -> dict[str, list[Project]]:
    order = sorted(projects, key=lambda p: p.ref)
    random.Random(seed).shuffle(order)
    n = len(order)
    cut1, cut2 = round(n * 0.6), round(n * 0.8)
    return {"train": order[:cut1], "val": order[cut1:cut2], "test": order[cut2:]}


# ---- sampling ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Draft:
    split: str
    template: Template
    projects: tuple[Project, ...]
    expression: Expression
    question: str


def _sample(
    corpus: Corpus,
    exprs: list[Expression],
    splits: dict[str, list[Project]],
    config: BuildConfig,
) -> list[Draft]:
    rng = random.Random(config.seed)
    per_template = _per_template(config)
    by_kind: dict[WindowKind, list[Expression]] = defaultdict(list)
    for expr in exprs:
        by_kind[expr.kind].append(expr)
    drafts: list[Draft] = []
    seen: set[tuple[str, frozenset[EntityRef], int, int]] = set()
    for split in SPLITS:
        pool = splits[split]
        groups: dict[tuple[str, str], list[Project]] = defaultdict(list)
        for project in pool:
            groups[(project.ref.outer, project.ref.inner)].append(project)
        multi_groups = [g for _, g in sorted(groups.items()) if len(g) >= 2]
        wanted = per_template * (config.train_factor if split == "train" else 1)
        for template in filter(corpus.applies, TEMPLATES):
            candidates = by_kind.get(template.window, [])
            if not candidates or not pool or (template.multi and not multi_groups):
                continue
            made = 0
            for _ in range(wanted * config.attempts_per_item):
                if made >= wanted:
                    break
                if template.multi:
                    group = rng.choice(multi_groups)
                    k = rng.randint(2, min(config.max_projects, len(group)))
                    chosen = tuple(rng.sample(group, k))
                else:
                    chosen = (rng.choice(pool),)
                expr = pick_expression(rng, template, chosen, candidates)
                if expr is None:
                    continue
                key = (
                    template.template_id,
                    frozenset(p.ref for p in chosen),
                    expr.window.first.index,
                    expr.window.last.index,
                )
                if key in seen:
                    continue
                seen.add(key)
                ref = chosen[0].ref
                question = render(
                    template,
                    rng.randrange(len(template.phrasings)),
                    [p.ref.name for p in chosen],
                    ref.inner,
                    ref.outer,
                    expr.window.expression,
                    rng.randrange(3),
                )
                drafts.append(Draft(split, template, chosen, expr, question))
                made += 1
    return drafts


def _per_template(config: BuildConfig) -> int:
    """Test / val questions per template (train: ``train_factor`` times as many)."""
    return max(1, math.ceil(config.test_size / len(TEMPLATES)))


def pick_expression(
    rng: random.Random,
    template: Template,
    projects: tuple[Project, ...],
    candidates: list[Expression],
) -> Expression | None:
    past = template.task is Task.HISTORY
    available = frozenset.intersection(
        *((p.history_months if past else p.future_months) for p in projects)
    )
    eligible = [e for e in candidates if e.months <= available]
    if not eligible:
        return None
    styles = sorted({e.style for e in eligible})
    style = rng.choice(styles)
    return rng.choice([e for e in eligible if e.style == style])


# ---- gold SQL and answers ------------------------------------------------------------------


def _execute(
    conn: duckdb.DuckDBPyConnection,
    corpus: Corpus,
    drafts: list[Draft],
    progress: Progress | None,
) -> tuple[list[QAItem], int]:
    items: list[QAItem] = []
    dropped = 0
    for done, draft in enumerate(drafts, start=1):
        item = gold_item(conn, corpus, draft)
        if item is None:
            dropped += 1
        else:
            items.append(item)
        if progress is not None:
            progress(done, len(drafts))
    return items, dropped


def gold_item(conn: duckdb.DuckDBPyConnection, corpus: Corpus, draft: Draft) -> QAItem | None:
    template = draft.template
    window = draft.expression.window
    ref0 = draft.projects[0].ref
    city, district = ref0.outer, ref0.inner
    names = [p.ref.name for p in draft.projects]
    reference = corpus.reference
    sides = {"history": corpus.history_tables, "future": corpus.future_tables}
    hist_first = reference - (HISTORY_WINDOW - 1)
    hist_tables = tables_of(sides["history"], city, district, hist_first, reference)
    target_side = "history" if template.task is Task.HISTORY else "future"
    target_tables = tables_of(sides[target_side], city, district, window.first, window.last)
    if not hist_tables or not target_tables:
        return None
    if template.task is Task.HISTORY:
        # A history question needs only its own window: those tables are its golden ones
        # (what a retriever should find), and its golden history query reads just them.
        golden = target_tables
        column = "units_sold" if template.metric is Metric.UNITS else "price"
        h_sql = history_sql([t for t, _ in golden], names, window.first, window.last, column)
        f_sql = ""
    else:
        # Forecasting needs the whole lookback (R-23..R), as in the paper's fixed two tables.
        golden = hist_tables
        h_sql = history_sql([t for t, _ in golden], names, hist_first, reference)
        f_sql = future_sql([t for t, _ in target_tables], names, window.first, window.last)
    a_sql = answer_sql(
        task=template.task,
        aggregate=template.aggregate,
        comparison=template.comparison,
        measure=template.measure,
        projects=names,
        history_tables=[t for t, _ in hist_tables],
        history_first=hist_first,
        reference=reference,
        target_tables=[t for t, _ in target_tables],
        window_first=window.first,
        window_last=window.last,
        metric=template.metric,
        change=template.change,
        which_month=template.which_month,
    )
    months = window.months
    if f_sql:
        conn.execute("USE future")
        found = len(conn.execute(f_sql).fetchall())
        # Back to the in-memory catalog: with `future` as default every qualified name in
        # the answer SQL resolves several times slower.
        conn.execute("USE memory")
        if found != len(months) * len(names):
            return None  # a month is missing for some project: the filter failed
    answer = rows_to_answer(conn.execute(a_sql).fetchall())
    if not answer:
        return None
    key = "|".join(
        [template.template_id, window.first.iso, window.last.iso, *sorted(names), city, district]
    )
    digest = hashlib.sha1(key.encode()).hexdigest()[:10]
    return QAItem(
        id=f"{template.template_id.lower()}-{digest}",
        split=draft.split,
        template_id=template.template_id,
        task=template.task.value,
        question=draft.question,
        projects=tuple(p.ref for p in draft.projects),
        months=tuple(m.iso for m in months),
        answer=answer,
        history_sql=h_sql,
        future_sql=f_sql,
        answer_sql=a_sql,
        table_captions=tuple(c for _, c in golden),
        tables=tuple(t for t, _ in golden),
        expression=window.expression,
        aggregate=template.aggregate.value,
        comparison=template.comparison.value,
        measure=template.measure.value,
        reference_month=reference.iso,
    )


def tables_of(
    side: dict[tuple[str, str, int], tuple[str, str]],
    city: str,
    district: str,
    first: Month,
    last: Month,
) -> list[tuple[str, str]]:
    """(table name, caption) of the district's year tables covering ``first..last``."""
    return [
        side[(city, district, year)]
        for year in range(first.year, last.year + 1)
        if (city, district, year) in side
    ]


def rows_to_answer(rows: list[tuple[object, ...]]) -> AnswerRows:
    answer: AnswerRows = []
    for row in rows:
        out: list[str | float] = []
        for value in row:
            if isinstance(value, str):
                out.append(value)
            elif value is None:
                return []
            else:
                out.append(round(float(value), 2))  # type: ignore[arg-type]
        answer.append(out)
    return answer


def _manifest(
    location: StoreLocation,
    corpus: Corpus,
    exprs: list[Expression],
    splits: dict[str, list[Project]],
    items: list[QAItem],
    config: BuildConfig,
    dropped: int,
) -> dict[str, object]:
    families = FAMILY_TEMPLATES if config.families == "all" else ()
    by_template: dict[str, dict[str, int]] = {
        t.template_id: dict.fromkeys(SPLITS, 0) for t in (*TEMPLATES, *families)
    }
    by_task: dict[str, dict[str, int]] = {t.value: dict.fromkeys(SPLITS, 0) for t in Task}
    by_expression: dict[str, int] = defaultdict(int)
    for item in items:
        by_template[item.template_id][item.split] += 1
        by_task[item.task][item.split] += 1
        by_expression[item.expression] += 1
    return {
        "name": "foretab ODTQA-FoRe",
        "store": Path(location.history).name,
        "reference_month": corpus.reference.iso,
        "config": {
            "seed": config.seed,
            "test_size": config.test_size,
            "train_factor": config.train_factor,
            "min_history_months": config.min_history_months,
            "history_window_months": HISTORY_WINDOW,
            "max_projects": config.max_projects,
            "families": config.families,
        },
        "filters": [
            f"at least {config.min_history_months} observed months in the {HISTORY_WINDOW} "
            "months up to the reference month, and at least one observed future month",
            "every month of the question's time expression is observed in the future store "
            "(history templates: the history store) for every project of the question",
            "several-project questions take 2-3 projects of one district and one split",
            "duplicates (same template, projects and months) removed; items whose gold SQL "
            "returns nothing are dropped",
        ],
        "sql": {
            "dialect": "duckdb",
            "history_sql": "runs on the history store",
            "future_sql": "runs on the future store (empty for history questions)",
            "answer_sql": "runs with the history store attached as `history` and the future "
            "store as `future`; its rows are the gold answer",
            "rounding": "prices, targets and current prices are rounded to 2 decimals before "
            "they are compared or printed",
        },
        "counts": {
            "split": {s: sum(1 for i in items if i.split == s) for s in SPLITS},
            "projects": {s: len(splits[s]) for s in SPLITS},
            "template": by_template,
            "task": by_task,
            "dropped": dropped,
        },
        "templates": [t.to_dict() for t in TEMPLATES],
        "family_templates": [t.to_dict() for t in families],
        "time_expressions": [
            {
                "expression": e.window.expression,
                "first": e.window.first.iso,
                "last": e.window.last.iso,
                "kind": e.kind.value,
                "used": by_expression.get(e.window.expression, 0),
            }
            for e in exprs
        ],
    }


__all__ = [
    "SPLITS",
    "BenchBuildError",
    "BuildConfig",
    "BuildSummary",
    "build_dataset",
    "default_expressions",
]
