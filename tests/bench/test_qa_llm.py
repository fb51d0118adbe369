"""The benchmark with the LLM engines, against the fake server (no real model anywhere)."""

from __future__ import annotations

import json

import pytest
from tests.timefore.scripted import ScriptedModel
from typer.testing import CliRunner

from conftest import BenchStore
from foretab.analyze import RuleAnalyzer
from foretab.bench.qa.evaluate import make_engine, run_benchmark
from foretab.bench.qa.report import render_markdown
from foretab.cli.main import app, register_commands
from foretab.dataset.items import read_items
from foretab.engine import build_engine
from foretab.llm import OpenAIProvider


def _slice(bench_store: BenchStore, n: int = 30):
    items = read_items(bench_store.out / "test.jsonl")
    picked = [i for i in items if i.task != "history"][:n]
    assert {i.task for i in picked} == {"forecast", "reasoning"}
    return picked


def _gold_model(items) -> ScriptedModel:
    by_question = {i.question: i for i in items}
    return ScriptedModel(
        captions=lambda q: list(by_question[q].table_captions),
        sql=lambda q: by_question[q].history_sql,
    )


@pytest.mark.slow  # an end-to-end run of several seconds; CI runs it
def test_gold_scripted_timefore_reaches_the_rules_gh_gf_score(
    bench_store: BenchStore, fake_openai
) -> None:
    items = _slice(bench_store)
    rules = make_engine(bench_store.db, "gh-gf", None, items)
    try:
        reference = run_benchmark(rules, items, ablation="gh-gf").to_dict()
    finally:
        rules.close()  # type: ignore[attr-defined]
    model = _gold_model(items)
    fake_openai.respond_with(model)
    llm = OpenAIProvider(fake_openai.options())
    # The TimeFore Retriever (LLM captions → catalog, LLM SQL → sqlQueryTool → guard) with
    # the golden future and the exact analyzer: only the LLM plumbing differs from GH+GF.
    engine = build_engine(
        bench_store.db, "timefore", llm=llm, future="oracle", analyzer=RuleAnalyzer()
    )
    try:
        run = run_benchmark(engine, items, ablation="none").to_dict()
    finally:
        engine.close()  # type: ignore[union-attr]
    assert reference["reasoning"]["accuracy"] == 100.0
    assert run["reasoning"] == reference["reasoning"]
    assert run["forecasting"] == reference["forecasting"]
    assert run["retrieval"]["f1"] == 100.0
    assert run["errors"]["total"] == 0
    assert set(model.seen) == {"captions", "sql"}
    assert run["llm"]["calls_per_question"] == 3.0  # caption, SQL tool call, final JSON
    assert run["llm"]["tokens_per_question"] == 3 * 19


def test_bench_run_cli_with_the_timefore_engine(bench_store: BenchStore, fake_openai, tmp_path):
    items = _slice(bench_store, 4)
    dataset = tmp_path / "slice.jsonl"
    dataset.write_text("".join(i.to_json() + "\n" for i in items))
    fake_openai.respond_with(_gold_model(items))
    register_commands()
    out = tmp_path / "run.json"
    details = tmp_path / "details.jsonl"
    result = CliRunner().invoke(
        app,
        [
            "bench", "run", "--db", bench_store.db, "--dataset", str(dataset), "--json",
            str(out), "--ablation", "gh-gf", "--engine", "timefore", "--details", str(details),
            "--llm-base-url", fake_openai.base_url, "--llm-model", fake_openai.model,
            "--fewshot", str(bench_store.out / "train.jsonl"), "--tool-model", "drift",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    # The few-shot examples came from the train split: its questions are in the prompts.
    train = {i.question for i in read_items(bench_store.out / "train.jsonl")}
    summary = next(r for r in fake_openai.requests if "<Summary>" in r["messages"][0]["content"])
    shown = summary["messages"][0]["content"]
    assert sum(q in shown for q in train) == 5
    data = json.loads(out.read_text())
    assert data["engine"] == "timefore" and data["questions"] == 4
    # gh-gf: golden history SQL and golden future; the LLM still summarises captions and
    # answers (here with the scripted "[[1.0]]", so the score is not the point).
    assert data["llm"]["calls"] == len(fake_openai.requests) > 0
    rows = [json.loads(line) for line in details.read_text().splitlines()]
    assert all(r["llm_calls"] >= 2 and r["llm_tokens"] > 0 for r in rows)
    markdown = render_markdown([data])
    assert "## LLM usage" in markdown and "timefore GH + GF" in markdown


def test_bench_run_llm_engine_without_llm_fails_before_work(bench_store, tmp_path, monkeypatch):
    for var in ("FORETAB_LLM_BASE_URL", "FORETAB_LLM_MODEL", "FORETAB_LLM_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    register_commands()
    result = CliRunner().invoke(
        app,
        [
            "bench", "run", "--db", bench_store.db, "--dataset",
            str(bench_store.out / "test.jsonl"), "--json", str(tmp_path / "r.json"),
            "--engine", "vanilla",
        ],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "--engine vanilla needs an LLM" in result.output
    assert not (tmp_path / "r.json").exists()


@pytest.mark.slow
def test_bench_run_llm_engine_with_worker_processes(bench_store: BenchStore, fake_openai, tmp_path):
    items = _slice(bench_store, 6)
    dataset = tmp_path / "slice.jsonl"
    dataset.write_text("".join(i.to_json() + "\n" for i in items))
    fake_openai.respond_with(_gold_model(items))
    register_commands()
    out = tmp_path / "run.json"
    result = CliRunner().invoke(
        app,
        [
            "bench", "run", "--db", bench_store.db, "--dataset", str(dataset), "--json",
            str(out), "--ablation", "gh-pf", "--engine", "timefore", "--workers", "2",
            "--tool-model", "drift",
            "--llm-base-url", fake_openai.base_url, "--llm-model", fake_openai.model,
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    # Each worker process built its own provider; every request is counted once.
    assert data["engine"] == "timefore" and data["questions"] == 6
    assert data["errors"]["total"] == 0
    assert (
        data["llm"]["calls"] == len(fake_openai.requests) >= 6 * 4
    )  # captions, forecaster x2, analyzer


def test_question_type_classifier_trained_on_the_train_split(bench_store: BenchStore) -> None:
    from foretab.core.plan import Task
    from foretab.timefore.analyzer import QuestionTypeClassifier

    train = read_items(bench_store.out / "train.jsonl")
    test = read_items(bench_store.out / "test.jsonl")
    model = QuestionTypeClassifier([i.question for i in train], [Task(i.task) for i in train])
    right = sum(model.predict(i.question) is Task(i.task) for i in test)
    assert right / len(test) >= 0.95, f"{right}/{len(test)}"
