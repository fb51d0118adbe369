"""The builder on the real corpus (slow): size, filters and the two-paths check."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from qa_reference import index_panel, index_units, reference_answer, reference_units

from foretab.bench.qa.build import SPLITS, BuildConfig, build_dataset
from foretab.bench.qa.templates import TEMPLATES_BY_ID
from foretab.core.months import Month
from foretab.dataset.items import read_items
from foretab.store import open_future, open_history
from foretab.store.ingest import ingest_path

pytestmark = pytest.mark.slow


def test_real_corpus_dataset(shared_data: Path, tmp_path: Path) -> None:
    # The classic ODTQA-FoRe templates (the families' gold has its own pandas check).
    db = str(tmp_path / "corpus.duckdb")
    ingest_path(shared_data / "realestate" / "project_prices.csv.gz", db, Month(2021, 12))
    summary = build_dataset(
        db, tmp_path / "qa", BuildConfig(seed=0, test_size=160, families="odtqa")
    )
    manifest = json.loads((tmp_path / "qa" / "manifest.json").read_text())
    assert len(manifest["time_expressions"]) >= 98
    # Every template is filled in every split on the real corpus.
    for template_id, counts in manifest["counts"]["template"].items():
        assert all(counts[s] > 0 for s in SPLITS), (template_id, counts)
    assert summary.counts["test"] >= 150
    # 6:2:2 over the projects that pass the filter.
    total = sum(summary.projects.values())
    assert summary.projects["test"] == pytest.approx(0.2 * total, abs=2)
    with open_history(db) as hist_store, open_future(db) as fut_store:
        hist_index, fut_index = index_panel(hist_store.panel()), index_panel(fut_store.panel())
    units = index_units(pd.read_csv(shared_data / "realestate" / "project_prices.csv.gz"))
    items = [i for s in SPLITS for i in read_items(tmp_path / "qa" / f"{s}.jsonl")]
    for item in items:
        want = reference_answer(item, hist_index, fut_index)
        if want is None:  # a units item: the store panels hold prices only
            want = reference_units(item, units)
        assert item.answer == want, item.id
    assert {i.template_id for i in items} == set(TEMPLATES_BY_ID)
