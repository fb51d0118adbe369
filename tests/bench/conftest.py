"""A tiny synthetic store and a QA dataset built from it, shared by the bench tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from foretab.bench.qa.build import BuildConfig, BuildSummary, build_dataset
from foretab.core.months import Month, month_range
from foretab.store.ingest import ingest_frame

REFERENCE = Month(2021, 12)
DISTRICTS = {
    ("Nanjing", "Jiangning District"): [
        "Poly Central Park", "Greenland Lixiang City", "Vanke Golden Mile", "Sunac Yuefu",
        "Longfor Tianjie", "China Overseas Jiuzhang", "Country Garden Binjiang",
        "Jinmao Palace", "Gemdale Lanting", "Zhaoshang Yongjing",
    ],
    ("Nanjing", "Gulou District"): [
        "Xuanwu Lakeside", "Dragon Gate Court", "Phoenix Terrace", "Jade Lotus Garden",
        "Pearl Harbour Residence", "Crane Pavilion", "Osmanthus Yard", "Lakeview Manor",
        "Bamboo Grove Estate",
    ],
    ("Shenzhen", "Bao'an District"): [
        "Vanke Future Light", "Metropolitan Garden", "O'Neill Bay", "Coastal City Mansion",
        "Qianhai Harbour", "Xixiang Garden", "Fuyong Estate", "Shajing Court",
        "Songgang Residence", "Xinan Terrace",
    ],
    ("Shenzhen", "Nanshan District"): [
        "Shekou Prince Bay", "Houhai Center", "Science Park Residence", "Taoyuan Garden",
        "Xili Lake Court", "Dachong Estate", "Nantou Ancient City Yard", "Baishizhou Terrace",
    ],
}  # fmt: skip
ALL_MONTHS = month_range(Month(2019, 6), Month(2022, 12))


def synthetic_frame(seed: int = 7) -> pd.DataFrame:
    """Monthly prices with gaps, ties and sparse projects, 2019-06..2022-12."""
    rng = np.random.default_rng(seed)
    rows: list[tuple[object, ...]] = []
    for (city, district), projects in DISTRICTS.items():
        for index, project in enumerate(projects):
            base = float(rng.uniform(12_000, 70_000))
            # Every fourth project is sparse (filtered out: < 6 history months); one project
            # per district keeps a flat price, so "No change" and ties occur.
            density = 0.2 if index % 4 == 3 else 0.85
            flat = index == 1
            price = base
            for month in ALL_MONTHS:
                price = price if flat else price * float(rng.normal(1.0, 0.04))
                keep = rng.random() < (0.8 if month > REFERENCE else density)
                if keep:
                    rows.append(
                        (
                            city,
                            district,
                            project,
                            month.iso,
                            round(price, 2),
                            int(rng.integers(1, 40)),
                        )
                    )
    frame = pd.DataFrame(
        rows, columns=["city", "district", "project", "month", "avg_price", "units_sold"]
    )
    # Chinese names (for the Chinese templates); the classic items never read them.
    frame["city_zh"] = frame["city"].map(CITY_ZH)
    frame["district_zh"] = frame["district"].map(DISTRICT_ZH)
    frame["project_zh"] = frame["project"].map(project_zh)
    return frame


CITY_ZH = {"Nanjing": "南京市", "Shenzhen": "深圳市"}
DISTRICT_ZH = {
    "Jiangning District": "江宁区",
    "Gulou District": "鼓楼区",
    "Bao'an District": "宝安区",
    "Nanshan District": "南山区",
}


def project_zh(project: str) -> str:
    """A distinct made-up Chinese name per project (``甲东苑``, ``乙东苑``, …)."""
    names = sorted({p for projects in DISTRICTS.values() for p in projects})
    i = names.index(project)
    return f"{'甲乙丙丁戊己庚辛壬癸'[i % 10]}{'东西南北中'[i // 10]}苑"


@dataclass(frozen=True)
class BenchStore:
    db: str
    out: Path
    summary: BuildSummary
    frame: pd.DataFrame


@pytest.fixture(scope="session")
def bench_store(tmp_path_factory: pytest.TempPathFactory) -> BenchStore:
    """Ingest the synthetic frame (R = 2021-12) and build a small dataset from it."""
    root = tmp_path_factory.mktemp("bench")
    db = str(root / "corpus.duckdb")
    frame = synthetic_frame()
    ingest_frame(frame, db, REFERENCE)
    out = root / "qa"
    summary = build_dataset(db, out, BuildConfig(seed=0, test_size=48))
    return BenchStore(db=db, out=out, summary=summary, frame=frame)
