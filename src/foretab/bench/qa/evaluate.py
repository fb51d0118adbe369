"""``foretab bench run``: ask the engine every question of a dataset split and score it.

Ablations follow the paper (§5.3):

==========  ===========================================================================
``none``    the full pipeline: parse → retrieve → history SQL → forecast → analyze
``gh-nf``   golden history SQL, no forecast (persistence: the engine's ``future="none"``)
``gtc``     golden table captions: the golden tables replace retrieval, rest unchanged
``gh-pf``   golden history SQL + predicted future (the forecaster)
``gh-gf``   golden history SQL + golden future (the oracle: future months read from the
            future store) — a deterministic analyzer must score 100 here
==========  ===========================================================================

Each ablation is a choice of stage implementations (``foretab.bench.qa.ablations``), made
when the engine is built; the forecaster always forecasts the history that was read.

An engine error never stops the run: it is an invalid completion (forecasting) or a wrong
answer (reasoning), and is counted by error type.
"""

from __future__ import annotations

import multiprocessing
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from foretab.bench.qa.metrics import (
    CategoricalOutcome,
    NumericOutcome,
    aggregate_categorical,
    aggregate_numeric,
    numeric_items,
    percentile,
    score_categorical,
    score_numeric,
    score_retrieval,
)
from foretab.bench.qa.reliability import by_kind
from foretab.bench.qa.significance import reasoning_intervals
from foretab.dataset.items import QAItem, family_of
from foretab.engine.choice import EngineChoice
from foretab.errors import ForetabError

Ablation = Literal["none", "gh-nf", "gtc", "gh-pf", "gh-gf"]
FutureMode = Literal["model", "oracle", "none"]
Progress = Callable[[int, int], None]


class BenchRunError(ForetabError):
    """The benchmark cannot run (unknown ablation, engine missing)."""


@dataclass(frozen=True, slots=True)
class AblationSpec:
    """How one ablation sets up and calls the engine."""

    name: str
    future: FutureMode
    golden_tables: bool
    golden_history: bool
    label: str


ABLATIONS: dict[str, AblationSpec] = {
    "none": AblationSpec("none", "model", False, False, "Full pipeline"),
    "gh-nf": AblationSpec("gh-nf", "none", False, True, "GH (NF)"),
    "gtc": AblationSpec("gtc", "model", True, False, "+GTC"),
    "gh-pf": AblationSpec("gh-pf", "model", False, True, "GH + PF"),
    "gh-gf": AblationSpec("gh-gf", "oracle", False, True, "GH + GF"),
}


class EngineLike(Protocol):
    """What the evaluator needs from ``foretab.engine.Engine``."""

    def ask(self, question: str) -> object: ...


def ablation_spec(name: str) -> AblationSpec:
    """The spec of ablation ``name``; a clear error for anything else."""
    try:
        return ABLATIONS[name]
    except KeyError:
        raise BenchRunError(
            f"Unknown ablation {name!r}; choose one of {', '.join(ABLATIONS)}."
        ) from None


def make_engine(
    db: str,
    ablation: str,
    model: str | None,
    items: Sequence[QAItem] = (),
    choice: EngineChoice | None = None,
    stages: dict[str, Any] | None = None,
) -> EngineLike:
    """The real engine with the stage implementations of ``ablation``.

    ``items`` supply the golden tables / history SQL of the golden ablations; ``choice``
    picks rules / timefore / vanilla / hybrid and the LLM (each worker process builds its
    own provider from it); ``stages`` replace single stages (e.g. ``analyzer``).
    """
    from foretab.bench.qa.ablations import GoldenCaptions, golden_history
    from foretab.engine import build_engine, provider_for
    from foretab.retrieve import Retriever

    spec = ablation_spec(ablation)
    choice = choice or EngineChoice()
    llm = provider_for(choice.kind, choice.llm)
    engine = build_engine(
        db,
        choice.kind,
        llm=llm,
        future=spec.future,
        model=model,
        **(choice.agent_options() if llm is not None else {}),
        **(stages or {}),
        retriever=(lambda e: GoldenCaptions(Retriever(e.store.catalog(), e.schema), items))
        if spec.golden_tables
        else None,
        reader=(lambda e: golden_history(e.guard, items, e.schema.columns))
        if spec.golden_history
        else None,
    )
    # Load the future source now: a missing model would otherwise turn every forecast
    # question of the run into an error instead of one clear message.
    try:
        _ = engine.future
    except ForetabError:
        engine.close()
        raise
    except Exception as exc:
        engine.close()
        raise BenchRunError(
            f"The engine's future source ({spec.future!r}) cannot be loaded for {db}: {exc!r}. "
            "For the model ablations train one first (see `foretab --help`), or run "
            "--ablation gh-gf / gh-nf."
        ) from exc
    return engine


@dataclass(frozen=True, slots=True)
class ItemResult:
    """What happened to one question."""

    item: QAItem
    predicted: object
    retrieved: tuple[str, ...]
    seconds: float
    error: str | None
    numeric: NumericOutcome | None = None
    categorical: CategoricalOutcome | None = None
    future_source: str = ""  # the engine's trace: "model:lgbm", "oracle", "none", ...
    llm_calls: int = 0
    llm_tokens: int = 0
    llm_seconds: float = 0.0
    #: reasoning answers: the stated probability that the answer is right (if any)
    probability: float | None = None
    #: ... before calibration (the share of scenarios), and its kind (``ProbabilityKind``)
    scenario_share: float | None = None
    probability_kind: str = ""
    #: numeric answers: (gold, lo, hi) per gold item the answer's interval covers or not
    intervals: tuple[tuple[float, float, float], ...] = ()
    #: which kind of number the intervals bound ("one month", "window mean", "change", …)
    interval_kind: str = ""

    @property
    def correct(self) -> bool:
        """Exact answer: every item right (numeric: within rounding)."""
        if self.categorical is not None:
            return self.categorical.correct
        return self.numeric is not None and self.numeric.exact

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.item.id,
            "template_id": self.item.template_id,
            "task": self.item.task,
            "question": self.item.question,
            "gold": self.item.answer,
            "predicted": self.predicted,
            "correct": self.correct,
            "error": self.error,
            "retrieved": list(self.retrieved),
            "golden_tables": list(self.item.tables),
            "latency_ms": round(self.seconds * 1000, 2),
            "llm_calls": self.llm_calls,
            "llm_tokens": self.llm_tokens,
            "llm_seconds": round(self.llm_seconds, 3),
            "probability": self.probability,
            "scenario_share": self.scenario_share,
            "probability_kind": self.probability_kind or None,
            "intervals": [list(i) for i in self.intervals],
            "interval_kind": self.interval_kind or None,
        }


@dataclass(frozen=True, slots=True)
class RunResult:
    """A scored run; ``to_dict`` is the ``--json`` file."""

    ablation: str
    model: str | None
    dataset: str
    results: tuple[ItemResult, ...]
    seconds: float
    meta: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        by_task: dict[str, list[ItemResult]] = defaultdict(list)
        for result in self.results:
            by_task[result.item.task].append(result)
        numeric = {
            task: aggregate_numeric([r.numeric for r in by_task[task] if r.numeric]).to_dict()
            for task in ("forecast", "history")
        }
        categorical = [r.categorical for r in by_task["reasoning"] if r.categorical]
        reasoning = aggregate_categorical(categorical)
        retrieval = score_retrieval((r.item.tables, r.retrieved) for r in self.results)
        latencies = [r.seconds * 1000 for r in self.results]
        errors = Counter(r.error.split(":", 1)[0] for r in self.results if r.error)
        # Which future source answered the forecast questions (history ones need none).
        sources = Counter(r.future_source for r in self.results if r.item.task != "history")
        sources.pop("", None)
        return {
            "ablation": self.ablation,
            "ablation_label": ablation_spec(self.ablation).label,
            "model": self.model,
            "future_source": sources.most_common(1)[0][0] if sources else None,
            "dataset": self.dataset,
            **self.meta,
            "questions": len(self.results),
            "seconds": round(self.seconds, 3),
            "forecasting": numeric["forecast"],
            "reasoning": reasoning.to_dict(),
            # 95% bootstrap intervals over the items: a split's accuracy is ±3 points sure.
            "reasoning_ci": reasoning_intervals(categorical),
            "history": numeric["history"],
            "retrieval": retrieval.to_dict(),
            "latency_ms": {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95)},
            "errors": {"total": sum(errors.values()), "by_type": dict(errors.most_common())},
            "llm": _llm_totals(self.results),
            "calibration": calibration(self.results),
            # Categorical forecast answers outside the reasoning task (scope picks, top N,
            # ranges about the future) state probabilities too.
            "calibration_other": calibration(self.results, task=None),
            # Per kind of stated probability (issue 30): n, mean stated, share right,
            # Spiegelhalter's z, Brier, ECE.
            "calibration_by_kind": by_kind(
                (r.probability_kind or "reasoning", r.probability, r.correct)
                for r in self.results
                if r.probability is not None and r.categorical is not None
            ),
            "intervals": interval_coverage(self.results),
            "per_template": per_template(self.results),
            "per_family": per_family(self.results),
        }


def calibration(
    results: Sequence[ItemResult], bins: int = 10, task: str | None = "reasoning"
) -> dict[str, object]:
    """Reliability of the stated probabilities of reasoning answers.

    Per bin of stated probability: how many answers, their mean stated probability and
    the share that were exactly right; plus the Brier score. Answers without a stated
    probability (no forecast distribution, engine errors) are left out and counted.
    ``task=None``: the categorical answers of every other task instead.
    """

    def chosen(r: ItemResult) -> bool:
        if task is None:
            return r.item.task != "reasoning" and r.categorical is not None
        return r.item.task == task

    pairs = [(r.probability, r.correct) for r in results if chosen(r) and r.probability is not None]
    table = []
    for k in range(bins):
        lo, hi = k / bins, (k + 1) / bins
        group = [(p, c) for p, c in pairs if lo <= p < hi or (k == bins - 1 and p == 1.0)]
        if group:
            table.append(
                {
                    "lo": lo,
                    "hi": hi,
                    "n": len(group),
                    "stated": sum(p for p, _ in group) / len(group),
                    "observed": sum(c for _, c in group) / len(group),
                }
            )
    n_reasoning = sum(chosen(r) for r in results)
    brier = sum((p - c) ** 2 for p, c in pairs) / len(pairs) if pairs else None
    mean_p = sum(p for p, _ in pairs) / len(pairs) if pairs else None
    acc = sum(c for _, c in pairs) / len(pairs) if pairs else None
    return {
        "n": len(pairs),
        "without_probability": n_reasoning - len(pairs),
        "brier": brier,
        "mean_stated": mean_p,
        "accuracy": acc,
        "bins": table,
    }


def interval_coverage(results: Sequence[ItemResult]) -> dict[str, object]:
    """Empirical coverage and mean width of the answers' intervals, by kind of number.

    Every gold number of a numeric answer whose prediction carries an interval counts once
    (the level is the run's, ``interval_level``).
    """
    by_kind: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    for r in results:
        if r.intervals:
            by_kind[r.interval_kind or "other"].extend(r.intervals)

    def summary(triples: Sequence[tuple[float, float, float]]) -> dict[str, object]:
        n = len(triples)
        return {
            "n": n,
            "coverage": sum(lo <= g <= hi for g, lo, hi in triples) / n if n else None,
            "mean_width": sum(hi - lo for _, lo, hi in triples) / n if n else None,
        }

    every = [t for triples in by_kind.values() for t in triples]
    return {**summary(every), "by_kind": {k: summary(v) for k, v in sorted(by_kind.items())}}


def _llm_totals(results: Sequence[ItemResult]) -> dict[str, float]:
    """LLM calls, tokens and seconds per question (zero for the rules engine)."""
    n = max(len(results), 1)
    calls = sum(r.llm_calls for r in results)
    tokens = sum(r.llm_tokens for r in results)
    seconds = sum(r.llm_seconds for r in results)
    return {
        "calls": calls,
        "tokens": tokens,
        "seconds": round(seconds, 3),
        "calls_per_question": round(calls / n, 3),
        "tokens_per_question": round(tokens / n, 1),
        "seconds_per_question": round(seconds / n, 3),
    }


def per_template(results: Sequence[ItemResult]) -> dict[str, dict[str, object]]:
    """Accuracy (exact answers) per template, plus MAE or F1 where they apply."""
    return _per_group(results, lambda item: item.template_id)


def per_family(results: Sequence[ItemResult]) -> dict[str, dict[str, object]]:
    """The same per family (``odtqa forecast`` / ``reasoning`` / ``history``, ``scope``, …).

    A family mixing numeric and categorical answers (scope: picks and means) gets F1 over
    its categorical items and MAE / MRE over its numeric ones.
    """
    return _per_group(results, family_of)


def _per_group(
    results: Sequence[ItemResult], key: Callable[[QAItem], str]
) -> dict[str, dict[str, object]]:
    grouped: dict[str, list[ItemResult]] = defaultdict(list)
    for result in results:
        grouped[key(result.item)].append(result)
    table: dict[str, dict[str, object]] = {}
    for template_id in sorted(grouped):
        group = grouped[template_id]
        row: dict[str, object] = {
            "task": group[0].item.task,
            "n": len(group),
            "accuracy": 100.0 * sum(r.correct for r in group) / len(group),
            "errors": sum(r.error is not None for r in group),
        }
        categorical = [r.categorical for r in group if r.categorical]
        numeric = [r.numeric for r in group if r.numeric]
        if categorical:
            row["f1"] = aggregate_categorical(categorical).f1
        if numeric:
            score = aggregate_numeric(numeric)
            row["mae"] = score.mae
            row["mre"] = score.mre
            row["valid_completion_rate"] = score.valid_completion_rate
        triples = [t for r in group for t in r.intervals]
        if triples:
            row["interval_coverage"] = sum(lo <= g <= hi for g, lo, hi in triples) / len(triples)
        table[template_id] = row
    return table


def is_categorical(item: QAItem) -> bool:
    """Scored item by item as a set: reasoning answers, and names or months of any task.

    A scope pick, top N or which-month answer is a history or forecast question whose gold
    holds no numbers; every classic history / forecast gold is numeric.
    """
    return item.task == "reasoning" or numeric_items(item.answer) is None


def evaluate_item(engine: EngineLike, item: QAItem, spec: AblationSpec) -> ItemResult:
    """Ask one question under ``spec`` and score the answer; never raises for engine errors."""
    started = time.perf_counter()
    predicted: object = None
    retrieved: tuple[str, ...] = ()
    error: str | None = None
    source = ""
    probability: float | None = None
    share: float | None = None
    probability_kind = ""
    bounds: tuple[tuple[int, float, float], ...] = ()
    kind = ""
    try:
        answer = engine.ask(item.question)
        probability = getattr(answer, "probability", None)
        share = getattr(answer, "scenario_share", None)
        probability_kind = _probability_kind(getattr(answer, "plan", None), probability)
        predicted = _plain(getattr(answer, "answer", None))
        bounds = tuple((i.row, i.lo, i.hi) for i in getattr(answer, "intervals", ()))
        kind = _interval_kind(getattr(answer, "plan", None)) if bounds else ""
        trace = getattr(answer, "trace", None)
        retrieved = tuple(getattr(trace, "tables", ()) or ())
        source = str(getattr(trace, "future_source", "") or "")
    except Exception as exc:  # any engine failure is a wrong answer, never a crashed run
        error = f"{type(exc).__name__}: {exc}"
    seconds = time.perf_counter() - started
    from foretab.engine import last_usage

    usage = last_usage(engine)
    llm = (
        {}
        if usage is None
        else {
            "llm_calls": usage.calls,
            "llm_tokens": usage.prompt_tokens + usage.completion_tokens,
            "llm_seconds": usage.seconds,
        }
    )
    if is_categorical(item):
        return ItemResult(
            item, predicted, retrieved, seconds, error,
            categorical=score_categorical(item.answer, predicted), future_source=source,
            probability=probability, scenario_share=share, probability_kind=probability_kind,
            **llm,
        )  # fmt: skip
    return ItemResult(
        item, predicted, retrieved, seconds, error,
        numeric=score_numeric(item.answer, predicted), future_source=source, **llm,
        intervals=_covered(item.answer, predicted, bounds), interval_kind=kind,
    )  # fmt: skip


def _covered(
    gold: object, predicted: object, bounds: Sequence[tuple[int, float, float]]
) -> tuple[tuple[float, float, float], ...]:
    """(gold, lo, hi) for each predicted row with an interval that matches a gold item."""
    gold_items = numeric_items(gold) or {}
    rows = predicted if isinstance(predicted, list) else []
    out = []
    for row, lo, hi in bounds:
        keyed = numeric_items([rows[row]]) if 0 <= row < len(rows) else None
        for key in keyed or {}:
            if key in gold_items:
                out.append((gold_items[key], lo, hi))
    return tuple(out)


def _probability_kind(plan: object, probability: float | None) -> str:
    """The kind of a stated probability (``foretab.analyze.calibration``); empty: none."""
    from foretab.analyze.calibration import kind_of
    from foretab.core.plan import Plan

    if probability is None or not isinstance(plan, Plan):
        return ""
    return kind_of(plan).value


def _interval_kind(plan: object) -> str:
    """What kind of number an answer's intervals bound (for the coverage table)."""
    from foretab.core.plan import Aggregate, Plan

    if not isinstance(plan, Plan):
        return "other"
    if plan.scopes:
        return "scope mean"
    if plan.change is not None:
        return "change vs now"
    windowed = plan.aggregate in (Aggregate.MEAN, Aggregate.MAX, Aggregate.MIN)
    if windowed and len(plan.future_months) > 1:
        return f"window {plan.aggregate.value}"
    return "one forecast month"


def _plain(value: object) -> object:
    # Tuples (and numpy scalars) become lists / floats, so the answer is JSON-ready.
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(value)


def run_benchmark(
    engine: EngineLike,
    items: Sequence[QAItem],
    *,
    ablation: str = "none",
    model: str | None = None,
    dataset: str = "",
    progress: Progress | None = None,
    meta: dict[str, str] | None = None,
) -> RunResult:
    """Ask every item and score the run."""
    spec = ablation_spec(ablation)
    started = time.perf_counter()
    results: list[ItemResult] = []
    for done, item in enumerate(items, start=1):
        results.append(evaluate_item(engine, item, spec))
        if progress is not None:
            progress(done, len(items))
    return RunResult(
        ablation=spec.name,
        model=model,
        dataset=dataset,
        results=tuple(results),
        seconds=time.perf_counter() - started,
        meta=dict(meta or {}),
    )


# Per-process engine of a parallel run (each worker builds its own: engines hold open
# connections and indexes, which do not cross processes).
_WORKER: dict[str, object] = {}


def _worker_init(
    db: str,
    ablation: str,
    model: str | None,
    items: Sequence[QAItem],
    choice: EngineChoice | None = None,
    stages: dict[str, Any] | None = None,
) -> None:
    try:
        _WORKER["engine"] = make_engine(db, ablation, model, items, choice, stages)
    except ForetabError as error:
        # An initializer that raises is restarted by the pool without end (the run hung,
        # printing tracebacks); the first item carries the reason back instead.
        _WORKER["error"] = str(error)
    _WORKER["spec"] = ablation_spec(ablation)


def _worker_eval(item: QAItem) -> ItemResult:
    if "error" in _WORKER:
        raise BenchRunError(str(_WORKER["error"]))
    engine = _WORKER["engine"]
    spec = _WORKER["spec"]
    assert isinstance(spec, AblationSpec)
    return evaluate_item(engine, item, spec)  # type: ignore[arg-type]


def run_parallel(
    db: str,
    items: Sequence[QAItem],
    *,
    workers: int,
    ablation: str = "none",
    model: str | None = None,
    dataset: str = "",
    progress: Progress | None = None,
    meta: dict[str, str] | None = None,
    choice: EngineChoice | None = None,
    stages: dict[str, Any] | None = None,
) -> RunResult:
    """Like ``run_benchmark`` with ``workers`` processes, each with its own real engine.

    Latencies are still per question (measured inside the worker); ``seconds`` is the wall
    time of the whole run.
    """
    spec = ablation_spec(ablation)
    if workers < 1:
        raise BenchRunError(f"--workers must be at least 1, got {workers}.")
    started = time.perf_counter()
    # spawn, not fork: a forked child would inherit DuckDB's threads and could deadlock.
    context = multiprocessing.get_context("spawn")
    by_id: dict[str, ItemResult] = {}
    with context.Pool(
        workers,
        initializer=_worker_init,
        initargs=(db, ablation, model, tuple(items), choice, stages),
    ) as pool:
        # The workers exit on their own (pool.join) rather than by the pool's exit, which
        # terminates them: the semaphores of a terminated pool were reported as leaked on
        # the user's terminal. After a worker's BenchRunError every item left fails at
        # once; an interrupt (Ctrl-C) still terminates them.
        try:
            results = pool.imap_unordered(_worker_eval, items, chunksize=8)
            for done, result in enumerate(results, 1):
                by_id[result.item.id] = result
                if progress is not None:
                    progress(done, len(items))
        except BenchRunError:
            pool.close()
            pool.join()
            raise
        pool.close()
        pool.join()
    return RunResult(
        ablation=spec.name,
        model=model,
        dataset=dataset,
        results=tuple(by_id[item.id] for item in items),
        seconds=time.perf_counter() - started,
        meta=dict(meta or {}),
    )
