"""The issue-10 families of ``foretab bench build``: built, scored, and answerable."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from conftest import BenchStore
from foretab.bench.qa.build import SPLITS, BuildConfig, build_dataset
from foretab.bench.qa.evaluate import is_categorical, run_benchmark
from foretab.bench.qa.family_templates import FAMILY_TEMPLATES, FAMILY_TEMPLATES_BY_ID
from foretab.bench.qa.report import render_markdown
from foretab.dataset.items import QAItem, family_of, read_items
from foretab.engine import Engine
from foretab.parse.text import has_cjk


def _families(store: BenchStore, *splits: str) -> list[QAItem]:
    items = [i for s in splits for i in read_items(store.out / f"{s}.jsonl")]
    return [i for i in items if i.family]


def test_every_family_template_yields_test_and_val_questions(bench_store: BenchStore) -> None:
    items = _families(bench_store, "test", "val")
    assert {i.template_id for i in items} == set(FAMILY_TEMPLATES_BY_ID)
    for item in items:
        template = FAMILY_TEMPLATES_BY_ID[item.template_id]
        assert item.family == template.family and item.language == template.language.value
        assert has_cjk(item.question) == (template.language.value == "zh"), item.question
    manifest = json.loads((bench_store.out / "manifest.json").read_text())
    assert len(manifest["family_templates"]) == len(FAMILY_TEMPLATES)
    # Chinese scope picks name projects by their Chinese names.
    picks = [i for i in items if i.template_id in ("Z01", "Z02", "Z05", "Z06")]
    assert picks and all(has_cjk(str(row[0])) for i in picks for row in i.answer)


@pytest.mark.slow  # an end-to-end run of several seconds; CI runs it
def test_classic_items_are_unchanged_by_the_families(
    bench_store: BenchStore, tmp_path: Path
) -> None:
    # The benchmark figures (docs/benchmarks/) rest on the classic items: the same bytes, in the same
    # order, at the head of every split.
    classic = build_dataset(
        bench_store.db, tmp_path / "odtqa", BuildConfig(seed=3, test_size=16, families="odtqa")
    )
    full = build_dataset(bench_store.db, tmp_path / "all", BuildConfig(seed=3, test_size=16))
    for split in SPLITS:
        old = (tmp_path / "odtqa" / f"{split}.jsonl").read_text().splitlines()
        new = (tmp_path / "all" / f"{split}.jsonl").read_text().splitlines()
        assert new[: len(old)] == old
        assert len(new) > len(old)
        assert all('"family"' in line for line in new[len(old) :])
    assert full.templates == classic.templates + len(FAMILY_TEMPLATES)  # fmt: skip


def test_scope_questions_of_a_district_stay_in_one_split(bench_store: BenchStore) -> None:
    where: dict[tuple[str, str], set[str]] = {}
    for split in SPLITS:
        for item in _families(bench_store, split):
            if FAMILY_TEMPLATES_BY_ID[item.template_id].is_scope:
                place = (item.projects[0].outer, item.projects[0].inner)
                where.setdefault(place, set()).add(split)
    assert where and all(len(splits) == 1 for splits in where.values())


@pytest.mark.slow  # an end-to-end run of several seconds; CI runs it
def test_the_engine_answers_every_family_item_from_the_true_future(bench_store: BenchStore) -> None:
    # The SQL path (past scope questions ranked in SQL) with the future store as forecast:
    # a deterministic engine must reproduce every gold answer the builder's SQL computed.
    # (The golden-history path is checked with every other item in test_qa_engine.)
    items = _families(bench_store, "test", "val")
    with Engine.open(bench_store.db, future="oracle") as engine:
        result = run_benchmark(engine, items, ablation="gh-gf")
    wrong = [
        (r.item.question, r.item.answer, r.predicted, r.error)
        for r in result.results
        if not r.correct
    ]
    assert not wrong, wrong[:5]
    data = result.to_dict()
    families = data["per_family"]
    assert set(families) == {t.family for t in FAMILY_TEMPLATES}
    assert all(row["accuracy"] == 100.0 for row in families.values())
    assert families["scope"]["f1"] == 100.0 and families["scope"]["mae"] == 0.0
    report = render_markdown([data])
    assert "## Accuracy per family" in report and "| which_month |" in report


def test_names_months_and_yes_no_are_scored_as_items(bench_store: BenchStore) -> None:
    kinds = Counter(
        (FAMILY_TEMPLATES_BY_ID[i.template_id].family, is_categorical(i))
        for i in _families(bench_store, "test")
    )
    assert kinds[("which_month", True)] and kinds[("threshold", True)]
    assert kinds[("units", False)] and kinds[("change", False)]
    assert kinds[("scope", True)] and kinds[("scope", False)]  # picks and means / counts
    classic = [i for i in read_items(bench_store.out / "test.jsonl") if not i.family]
    assert all(is_categorical(i) == (i.task == "reasoning") for i in classic)
    assert {family_of(i) for i in classic} == {"odtqa forecast", "odtqa reasoning", "odtqa history"}
