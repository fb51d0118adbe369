"""Builder invariants on the tiny synthetic store: splits, filters, duplicates, gold answers."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import duckdb
import pytest
import sqlglot
from qa_reference import index_panel, reference_answer

from conftest import REFERENCE, BenchStore
from foretab.bench.qa.build import (
    BUILD_THREADS,
    SPLITS,
    BenchBuildError,
    BuildConfig,
    build_dataset,
)
from foretab.bench.qa.templates import TEMPLATES, TEMPLATES_BY_ID
from foretab.core.months import Month
from foretab.core.plan import Metric, Task
from foretab.dataset.items import QAItem, read_items
from foretab.store import open_future, open_history


def load_all(store: BenchStore) -> dict[str, list[QAItem]]:
    return {split: read_items(store.out / f"{split}.jsonl") for split in SPLITS}


def load(store: BenchStore) -> dict[str, list[QAItem]]:
    """The classic ODTQA-FoRe items (the families have tests of their own)."""
    return {s: [i for i in items if not i.family] for s, items in load_all(store).items()}


def test_counts_and_manifest_match_the_files(bench_store: BenchStore) -> None:
    items = load_all(bench_store)
    manifest = json.loads((bench_store.out / "manifest.json").read_text())
    assert manifest["counts"]["split"] == {s: len(items[s]) for s in SPLITS}
    assert manifest["reference_month"] == REFERENCE.iso
    assert len(manifest["templates"]) == len(TEMPLATES) >= 26
    for split in SPLITS:
        assert items[split], f"{split} is empty"
        assert all(i.split == split for i in items[split])
        by_template = Counter(i.template_id for i in items[split])
        for template_id, counts in manifest["counts"]["template"].items():
            assert counts[split] == by_template.get(template_id, 0)
    # Train is about three times val / test (6:2:2 over projects).
    assert len(items["train"]) > 2 * len(items["test"])
    # Every template produced test questions on this small store.
    assert {i.template_id for i in items["test"] if not i.family} == set(TEMPLATES_BY_ID)


def test_splits_are_disjoint_by_project(bench_store: BenchStore) -> None:
    items = load(bench_store)
    projects = {s: {p for i in items[s] for p in i.projects} for s in SPLITS}
    assert not projects["train"] & projects["val"]
    assert not projects["train"] & projects["test"]
    assert not projects["val"] & projects["test"]


def test_filters_hold_for_every_item(bench_store: BenchStore) -> None:
    with open_history(bench_store.db) as hist_store, open_future(bench_store.db) as fut_store:
        history, future = hist_store.panel(), fut_store.panel()
    first = (REFERENCE - 23).iso
    for split_items in load(bench_store).values():
        for item in split_items:
            assert 1 <= len(item.projects) <= 3
            assert len({(p.outer, p.inner) for p in item.projects}) == 1
            for ref in item.projects:
                mine = (history["project"] == ref.name) & (history["district"] == ref.inner)
                months = history[mine & (history["month"] >= first)]["month"]
                assert months.nunique() >= 6, (item.id, ref)
                source = history if item.task == Task.HISTORY else future
                theirs = source[(source["project"] == ref.name) & (source["district"] == ref.inner)]
                assert set(item.months) <= set(theirs["month"]), (item.id, ref, item.months)
            window = [Month.parse(m) for m in item.months]
            if item.task == Task.HISTORY:
                assert window[-1] <= REFERENCE
            else:
                assert window[0] > REFERENCE and window[-1] <= REFERENCE + 12


def test_no_duplicates(bench_store: BenchStore) -> None:
    all_items = [i for items in load(bench_store).values() for i in items]
    keys = Counter(
        (i.template_id, frozenset(i.projects), i.months[0], i.months[-1]) for i in all_items
    )
    assert max(keys.values()) == 1
    ids = Counter(i.id for i in all_items)
    assert max(ids.values()) == 1


def test_gold_sql_agrees_with_python_recomputation(bench_store: BenchStore) -> None:
    """Two independent paths: the builder's answer SQL and a Python reading of the panels."""
    with open_history(bench_store.db) as hist_store, open_future(bench_store.db) as fut_store:
        hist_index, fut_index = index_panel(hist_store.panel()), index_panel(fut_store.panel())
    checked = Counter()
    for split_items in load(bench_store).values():
        for item in split_items:
            expected = reference_answer(item, hist_index, fut_index)
            if expected is None:
                continue
            assert item.answer == expected, (item.id, item.question, item.answer, expected)
            checked[item.template_id] += 1
    units = {t for t, tpl in TEMPLATES_BY_ID.items() if tpl.metric is Metric.UNITS}
    assert set(checked) == set(TEMPLATES_BY_ID) - units
    answers = Counter(
        str(i.answer)
        for items in load(bench_store).values()
        for i in items
        if i.task == "reasoning"
    )
    # The synthetic store has a flat project and sparse ones: both outcomes must occur.
    assert answers["[['No change']]"] >= 1
    assert answers["[['None']]"] >= 1


def test_gold_sql_runs_on_the_stores(bench_store: BenchStore, tmp_path: Path) -> None:
    history_file = bench_store.db
    future_file = bench_store.db.replace(".duckdb", ".future.duckdb")
    # One thread each, as the builder's own connection: the statements are small.
    one = {"threads": BUILD_THREADS}
    hist = duckdb.connect(history_file, read_only=True, config=one)
    fut = duckdb.connect(future_file, read_only=True, config=one)
    both = duckdb.connect(config=one)
    both.execute(f"ATTACH '{history_file}' AS history (READ_ONLY)")
    both.execute(f"ATTACH '{future_file}' AS future (READ_ONLY)")
    try:
        for item in load(bench_store)["test"]:
            for sql in (item.history_sql, item.future_sql, item.answer_sql):
                if sql:
                    sqlglot.parse_one(sql, read="duckdb")
            rows = hist.execute(item.history_sql).fetchall()
            assert {r[0] for r in rows} == {p.name for p in item.projects}
            if item.task != Task.HISTORY:
                future_rows = fut.execute(item.future_sql).fetchall()
                assert len(future_rows) == len(item.months) * len(item.projects)
            else:
                assert item.future_sql == ""
            gold = both.execute(item.answer_sql).fetchall()
            assert len(gold) == len(item.answer)
            assert item.table_captions and len(item.table_captions) == len(item.tables)
    finally:
        for conn in (hist, fut, both):
            conn.close()


@pytest.mark.slow  # an end-to-end run of several seconds; CI runs it
def test_build_is_deterministic_and_seeded(bench_store: BenchStore, tmp_path: Path) -> None:
    small = BuildConfig(seed=0, test_size=32)
    one = build_dataset(bench_store.db, tmp_path / "one", small)
    two = build_dataset(bench_store.db, tmp_path / "two", small)
    other = build_dataset(bench_store.db, tmp_path / "other", BuildConfig(seed=1, test_size=32))
    for split in SPLITS:
        assert (tmp_path / "one" / f"{split}.jsonl").read_text() == (
            tmp_path / "two" / f"{split}.jsonl"
        ).read_text()
    assert one.counts == two.counts
    first = {p for i in read_items(tmp_path / "one" / "test.jsonl") for p in i.projects}
    second = {p for i in read_items(tmp_path / "other" / "test.jsonl") for p in i.projects}
    assert first != second
    assert other.counts["test"] > 0


def test_questions_vary_in_wording(bench_store: BenchStore) -> None:
    items = [i for items in load(bench_store).values() for i in items]
    for template in TEMPLATES:
        texts = [i.question for i in items if i.template_id == template.template_id]
        openings = Counter(" ".join(t.split()[:2]) for t in texts)
        # Several phrasings are in use and none takes every question of its template.
        assert len(openings) >= 2, (template.template_id, openings)


def test_manifest_lists_time_expressions(bench_store: BenchStore) -> None:
    manifest = json.loads((bench_store.out / "manifest.json").read_text())
    exprs = manifest["time_expressions"]
    assert len(exprs) >= 98
    assert {"next month", "next quarter", "next year"} <= {e["expression"] for e in exprs}
    assert sum(e["used"] for e in exprs) == sum(manifest["counts"]["split"].values())


def test_missing_store_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BenchBuildError, match="foretab ingest"):
        build_dataset(str(tmp_path / "nope.duckdb"), tmp_path / "out")


def test_postgres_store_is_refused_with_a_reason(tmp_path: Path) -> None:
    with pytest.raises(BenchBuildError, match="DuckDB"):
        build_dataset("postgresql://u@localhost:5432/corpus", tmp_path / "out")
