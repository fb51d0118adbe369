"""The evaluator with scripted fake engines, the report, and the CLI commands."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import BenchStore
from foretab.bench.qa import evaluate as qa_eval
from foretab.bench.qa.evaluate import (
    ABLATIONS,
    BenchRunError,
    ablation_spec,
    is_categorical,
    make_engine,
    run_benchmark,
)
from foretab.bench.qa.report import load_runs, render_markdown, write_report
from foretab.cli.main import app, register_commands
from foretab.core.plan import Task
from foretab.dataset.items import QAItem, read_items
from foretab.engine.choice import EngineChoice
from foretab.errors import ForetabError, QuestionError


@dataclass(frozen=True)
class FakeTrace:
    tables: tuple[str, ...]


@dataclass(frozen=True)
class FakeAnswer:
    answer: list[list[str | float]]
    trace: FakeTrace


@dataclass
class GoldEngine:
    """Answers with the gold answer, except where told to fail or to be wrong."""

    items: dict[str, QAItem]
    fail: set[str] = field(default_factory=set)
    wrong: set[str] = field(default_factory=set)
    calls: list[str] = field(default_factory=list)

    def ask(self, question: str) -> FakeAnswer:
        self.calls.append(question)
        item = self.items[question]
        if item.id in self.fail:
            raise QuestionError(f"cannot parse {question!r}")
        answer = item.answer
        if item.id in self.wrong:
            answer = [[r[0] + 1.0 if isinstance(r[0], float) else "Nobody"] for r in answer]
        return FakeAnswer(answer, FakeTrace(item.tables))


@pytest.fixture
def test_items(bench_store: BenchStore) -> list[QAItem]:
    return read_items(bench_store.out / "test.jsonl")


def test_perfect_engine_scores_perfectly(test_items: list[QAItem]) -> None:
    engine = GoldEngine({i.question: i for i in test_items})
    data = run_benchmark(engine, test_items, ablation="gh-gf").to_dict()
    assert data["questions"] == len(test_items)
    assert data["forecasting"]["mae"] == 0.0
    assert data["forecasting"]["valid_completion_rate"] == 100.0
    assert data["reasoning"]["accuracy"] == 100.0
    assert data["reasoning"]["f1"] == 100.0
    # Every resample of all-right items is all right: the interval is the point.
    assert data["reasoning_ci"]["accuracy"] == [100.0, 100.0]
    assert data["retrieval"]["f1"] == 100.0
    assert data["errors"]["total"] == 0
    assert all(row["accuracy"] == 100.0 for row in data["per_template"].values())
    assert data["latency_ms"]["p50"] is not None
    json.dumps(data)  # the --json file is plain JSON


def test_errors_and_wrong_answers_are_scored_never_raised(test_items: list[QAItem]) -> None:
    reasoning = [i for i in test_items if i.task == "reasoning"]
    # Numeric forecasts only: a scope pick or which-month of the future is scored by items.
    forecast = [i for i in test_items if i.task == "forecast" and not is_categorical(i)]
    fail = {reasoning[0].id, forecast[0].id}
    wrong = {reasoning[1].id}
    engine = GoldEngine({i.question: i for i in test_items}, fail=fail, wrong=wrong)
    result = run_benchmark(engine, test_items, ablation="none")
    data = result.to_dict()
    assert data["errors"] == {"total": 2, "by_type": {"QuestionError": 2}}
    n_reasoning = len(reasoning)
    assert data["reasoning"]["accuracy"] == pytest.approx(100.0 * (n_reasoning - 2) / n_reasoning)
    assert data["reasoning"]["precision"] < 100.0
    low, high = data["reasoning_ci"]["accuracy"]
    assert low < data["reasoning"]["accuracy"] <= high <= 100.0
    assert data["forecasting"]["valid_completion_rate"] == pytest.approx(
        100.0 * (len(forecast) - 1) / len(forecast)
    )
    assert data["forecasting"]["mae"] == 0.0  # the failed one has no matched items
    failed = next(r for r in result.results if r.item.id == forecast[0].id)
    assert failed.error and failed.error.startswith("QuestionError") and not failed.correct


@pytest.mark.parametrize("ablation", ["gh-nf", "gh-gf"])
def test_ablations_are_stage_implementations(
    bench_store: BenchStore, test_items: list[QAItem], ablation: str
) -> None:
    # The golden inputs reach the engine as stages, not as arguments of ``ask``.
    engine = make_engine(bench_store.db, ablation, None, test_items)
    try:
        assert engine.reader.name == "golden-history"  # type: ignore[attr-defined]
        assert engine.retriever.name == "captions"  # type: ignore[attr-defined]
        # a question about the future: the future source in force is in its trace
        item = next(i for i in test_items if i.task == Task.FORECAST)
        answer = engine.ask(item.question)
        read = next(s for s in answer.trace.steps if s.stage == "read")  # type: ignore[attr-defined]
        assert read.implementation == "golden-history"
        assert read.sql.split() == engine.guard.prepare(item.history_sql).split()  # type: ignore[attr-defined]
        assert answer.trace.future_source == {"gh-nf": "none", "gh-gf": "oracle"}[ablation]  # type: ignore[attr-defined]
        with pytest.raises(ForetabError, match="golden"):
            engine.ask(
                "What will the price of Poly Central Park in Jiangning, Nanjing be next month?"
            )
    finally:
        engine.close()  # type: ignore[attr-defined]


def test_golden_captions_replace_retrieval(
    bench_store: BenchStore, test_items: list[QAItem]
) -> None:
    from foretab.bench.qa.ablations import GoldenCaptions
    from foretab.engine import Engine
    from foretab.retrieve import Retriever

    with Engine.open(bench_store.db, future="oracle") as engine:
        golden = GoldenCaptions(Retriever(engine.store.catalog()), test_items)
        for item in test_items[:5]:
            plan = engine.parse(item.question)
            retrieval = golden.retrieve(plan)
            assert tuple(t.table_name for t in retrieval.tables) == tuple(item.tables)
            assert {m.method for m in retrieval.matches} == {"given"}


def test_ablation_specs_choose_the_future_source() -> None:
    assert {a: ablation_spec(a).future for a in ABLATIONS} == {
        "none": "model", "gh-nf": "none", "gtc": "model", "gh-pf": "model", "gh-gf": "oracle",
    }  # fmt: skip


def test_unknown_ablation_is_a_clear_error() -> None:
    with pytest.raises(BenchRunError, match="gh-gf"):
        ablation_spec("golden")


def test_report_has_table_chart_and_weak_templates(
    test_items: list[QAItem], tmp_path: Path
) -> None:
    items = {i.question: i for i in test_items}
    reasoning = [i.id for i in test_items if i.task == "reasoning"]
    runs = []
    for ablation, wrong in (("gh-gf", set()), ("none", set(reasoning[::2]))):
        data = run_benchmark(
            GoldEngine(items, wrong=wrong), test_items, ablation=ablation
        ).to_dict()
        path = tmp_path / f"{ablation}.json"
        path.write_text(json.dumps(data))
        runs.append(path)
    loaded = load_runs(runs)
    assert [r["ablation"] for r in loaded] == ["gh-gf", "none"]  # paper order
    md, png = write_report(loaded, tmp_path / "report.md")
    text = md.read_text()
    assert "| GH + GF |" in text and "| Full pipeline |" in text
    assert "![Reasoning accuracy and F1 per ablation](report.png)" in text
    assert "Accuracy per template" in text and "**" in text
    assert "Forecasting error per template" in text
    assert "95% bootstrap intervals" in text
    full = loaded[1]
    low, high = full["reasoning_ci"]["accuracy"]
    assert f"| {full['reasoning']['accuracy']:,.2f} | {low:,.2f}–{high:,.2f} |" in text
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert render_markdown(loaded).count("\n| R") >= 20


@pytest.mark.slow  # builds a second dataset through the CLI (~3 s of CPU); the library path stays fast
def test_cli_build_run_and_report(
    bench_store: BenchStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_commands()
    runner = CliRunner()
    out = tmp_path / "qa"
    built = runner.invoke(
        app, ["bench", "build", "--db", bench_store.db, "--out", str(out), "--test-size", "32"]
    )
    assert built.exit_code == 0, built.output
    assert (out / "manifest.json").exists() and (out / "test.jsonl").exists()
    items = read_items(out / "test.jsonl")

    def fake_engine(
        db: str, ablation: str, model: str | None, items_: object, *engine_args: object
    ) -> GoldEngine:
        assert db == bench_store.db and engine_args == (EngineChoice(), {})
        return GoldEngine({i.question: i for i in items})

    monkeypatch.setattr(qa_eval, "make_engine", fake_engine)
    run_json = tmp_path / "run.json"
    ran = runner.invoke(
        app,
        [
            "bench", "run", "--db", bench_store.db, "--dataset", str(out / "test.jsonl"),
            "--ablation", "gh-gf", "--json", str(run_json), "--report", str(tmp_path / "r.md"),
            "--limit", "10", "--details", str(tmp_path / "d.jsonl"),
        ],
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    data = json.loads(run_json.read_text())
    assert data["questions"] == 10 and data["ablation"] == "gh-gf"
    assert len((tmp_path / "d.jsonl").read_text().splitlines()) == 10
    assert (tmp_path / "r.md").exists() and (tmp_path / "r.png").exists()
    reported = runner.invoke(
        app, ["bench", "report", str(run_json), "--out", str(tmp_path / "all.md")]
    )
    assert reported.exit_code == 0, reported.output
    bad = runner.invoke(
        app,
        [
            "bench",
            "run",
            "--db",
            bench_store.db,
            "--dataset",
            str(tmp_path / "missing.jsonl"),
            "--json",
            str(run_json),
        ],
    )
    assert bad.exit_code == 2 and "foretab bench build" in bad.output


@dataclass(frozen=True)
class FakeInterval:
    row: int
    lo: float
    hi: float


@dataclass(frozen=True)
class IntervalAnswer:
    answer: list[list[str | float]]
    trace: FakeTrace
    intervals: tuple[FakeInterval, ...]


def test_interval_coverage_counts_gold_numbers_inside_their_intervals(
    test_items: list[QAItem],
) -> None:
    numeric = [i for i in test_items if i.task == "forecast" and not is_categorical(i)]
    covered = {i.id for i in numeric[::2]}  # every other question's interval holds its gold

    class Engine:
        def ask(self, question: str) -> IntervalAnswer:
            item = next(i for i in numeric if i.question == question)
            rows = item.answer
            shift = 0.0 if item.id in covered else 1_000.0
            bounds = tuple(
                FakeInterval(k, float(r[-1]) - 1 + shift, float(r[-1]) + 1 + shift)
                for k, r in enumerate(rows)
            )
            return IntervalAnswer(rows, FakeTrace(item.tables), bounds)

    data = run_benchmark(Engine(), numeric, ablation="none").to_dict()
    n_numbers = sum(len(i.answer) for i in numeric)
    inside = sum(len(i.answer) for i in numeric if i.id in covered)
    assert data["intervals"]["n"] == n_numbers
    assert data["intervals"]["coverage"] == pytest.approx(inside / n_numbers)
    assert data["intervals"]["mean_width"] == pytest.approx(2.0)
    assert data["intervals"]["by_kind"]["other"]["n"] == n_numbers


def test_report_lists_interval_coverage_by_kind() -> None:
    from foretab.bench.qa.calibration import coverage_lines

    run = {
        "ablation_label": "Full pipeline",
        "dataset": "runs/qa/val.jsonl",
        "decision": "point",
        "intervals": {
            "n": 5,
            "by_kind": {"window mean": {"n": 5, "coverage": 0.8, "mean_width": 1234.0}},
        },
    }
    lines = coverage_lines([run, {"intervals": {"n": 0}}])
    assert "window mean" in lines[2]
    assert lines[-1] == "| Full pipeline, val, point | 80.0% (n 5, width 1,234) |"
    assert len(lines) == 5  # the run without intervals is left out


def test_cli_run_takes_the_scenarios_correlations(
    bench_store: BenchStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from foretab.analyze.scenarios import Copula

    register_commands()
    runner = CliRunner()
    items = read_items(bench_store.out / "test.jsonl")
    seen: list[object] = []

    def fake_engine(
        db: str, ablation: str, model: str | None, items_: object, *engine_args: object
    ) -> GoldEngine:
        seen.append(engine_args[-1])
        return GoldEngine({i.question: i for i in items})

    monkeypatch.setattr(qa_eval, "make_engine", fake_engine)
    run_json = tmp_path / "run.json"
    args = ["bench", "run", "--db", bench_store.db, "--dataset", str(bench_store.out / "test.jsonl"),
            "--json", str(run_json), "--limit", "3"]  # fmt: skip
    ran = runner.invoke(app, [*args, "--month-correlation", "1", "--shared-correlation", "0"])
    assert ran.exit_code == 0, ran.output
    (options,) = seen
    assert options["analyzer"].copula == Copula(1.0, 0.0)  # type: ignore[index]
    assert json.loads(run_json.read_text())["copula"] == "months 1, shared 0, outer 0.05"
    bad = runner.invoke(app, [*args, "--month-correlation", "0.2", "--shared-correlation", "0.5"])
    assert bad.exit_code != 0 and "--month-correlation" in bad.output
    fleeting = runner.invoke(app, [*args, "--fleeting-share", "0.5"])
    assert fleeting.exit_code == 0, fleeting.output
    assert seen[-1]["analyzer"].copula == Copula(fleeting=0.5)  # type: ignore[index]
    said = json.loads(run_json.read_text())["copula"]
    assert said == "months 0.7, shared 0.05, outer 0.05, fleeting 0.5"
    grown = runner.invoke(app, [*args, "--shock-growth", "0.1"])
    assert grown.exit_code == 0, grown.output
    assert seen[-1]["analyzer"].copula == Copula(growth=0.1)  # type: ignore[index]
    said = json.loads(run_json.read_text())["copula"]
    assert said == "months 0.7, shared 0.05, outer 0.05, growth 0.1"
    shifted = runner.invoke(app, [*args, "--shock-shift", "0.08"])
    assert shifted.exit_code == 0, shifted.output
    assert seen[-1]["analyzer"].copula == Copula(shift=0.08)  # type: ignore[index]
    said = json.loads(run_json.read_text())["copula"]
    assert said == "months 0.7, shared 0.05, outer 0.05, shift 0.08"


def test_bench_run_help_states_the_scenario_defaults() -> None:
    """The --month/--shared-correlation help quotes the engine's real defaults."""
    from foretab.analyze.scenarios import (
        MONTH_CORRELATION,
        OUTER_CORRELATION,
        SHARED_CORRELATION,
    )

    register_commands()
    result = CliRunner().invoke(app, ["bench", "run", "--help"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert f"(default {MONTH_CORRELATION:g}; 1 = comonotone months)" in text
    assert f"(default {SHARED_CORRELATION:g}; 0 = independent)" in text
    assert f"(default {OUTER_CORRELATION:g}; 0 = none)" in text


def test_decision_option_names_the_analyzer_default_and_every_rule() -> None:
    from foretab.analyze.probability import DECISIONS, DEFAULT_DECISION
    from foretab.cli.options import DEFAULT_DECISION_NAME

    assert DEFAULT_DECISION_NAME == DEFAULT_DECISION
    register_commands()
    for command in (["ask"], ["bench", "run"]):
        result = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "400"})
        assert result.exit_code == 0, result.output
        text = " ".join(result.output.split())
        assert f"[default: {DEFAULT_DECISION}]" in text
        assert all(f"'{rule}'" in text for rule in DECISIONS)
