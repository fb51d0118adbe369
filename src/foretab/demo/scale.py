"""A corpus K times the real one, with its shape, streamed to Parquet (issue 27).

The real corpus (``../shared/data/realestate``) has 8 cities, 102 districts (10 to 16 per
city), 5,634 projects and 48 months (2019-01..2022-12); city price levels from about
13,500 to 51,000 yuan/m². The scale corpus has 8·K cities with the same district counts
per city, 5,634·K projects and the same months; every project is simulated by the demo
corpus's calibrated model (``foretab.demo.generate.simulate_project``: launches, gaps,
sell-outs, level shifts, units that fade after launch, a few implausible prices).

One city is generated and written at a time (one Parquet row group), so memory holds one
city, never the corpus: K = 100 (about 10 M rows) needs no more than K = 1.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from foretab.core.months import Month, month_range
from foretab.demo.generate import (
    COLUMNS,
    DemoError,
    MarketPhases,
    add_outliers,
    city_log_index,
    market_phases,
    simulate_project,
)
from foretab.demo.names import project_names

SCALE_START = Month(2019, 1)
SCALE_MONTHS = 48
SCALE_REFERENCE = Month(2021, 12)  # the real corpus's standard reference month
REAL_PROJECTS = 5634
# Districts per city and typical price (median yuan/m²) of the real corpus's 8 cities.
REAL_CITIES: tuple[tuple[int, float], ...] = (
    (15, 50760.0),
    (16, 43740.0),
    (11, 24810.0),
    (11, 51130.0),
    (12, 24410.0),
    (12, 22940.0),
    (10, 19800.0),
    (15, 13560.0),
)
MAX_SCALE = 1000

# Syllables of the invented place names (pinyin, hanzi); none is a real corpus city.
_SYLLABLES: tuple[tuple[str, str], ...] = (
    ("an", "安"), ("bai", "白"), ("bei", "北"), ("chang", "昌"), ("chen", "辰"),
    ("dong", "东"), ("feng", "丰"), ("fu", "福"), ("gao", "高"), ("he", "河"),
    ("heng", "衡"), ("hua", "华"), ("jia", "嘉"), ("jin", "晋"), ("kang", "康"),
    ("lan", "兰"), ("lin", "林"), ("long", "隆"), ("mei", "梅"), ("ming", "明"),
    ("ning", "宁"), ("ping", "平"), ("qing", "清"), ("rui", "瑞"), ("shan", "山"),
    ("shui", "水"), ("song", "松"), ("tai", "泰"), ("tong", "通"), ("wei", "渭"),
    ("xi", "西"), ("xin", "新"), ("ya", "雅"), ("yang", "阳"), ("yong", "永"),
    ("yun", "云"), ("ze", "泽"), ("zhao", "昭"),
)  # fmt: skip

ScaleProgress = Callable[[int, int], None]  # (cities written, cities in all)


@dataclass(frozen=True, slots=True)
class ScaleCorpus:
    """What ``write_scale_corpus`` wrote."""

    path: Path
    scale: int
    cities: int
    districts: int
    projects: int
    rows: int


def _place_names(rng: np.random.Generator, count: int) -> list[tuple[str, str]]:
    """``count`` distinct two-syllable names (pinyin capitalised, hanzi), no syllable doubled."""
    pairs = [(a, b) for a in range(len(_SYLLABLES)) for b in range(len(_SYLLABLES)) if a != b]
    if count > len(pairs):
        raise DemoError(f"at most {len(pairs)} distinct place names, {count} asked for")
    chosen = rng.choice(len(pairs), count, replace=False)
    names = []
    for i in chosen:
        a, b = pairs[int(i)]
        names.append(
            (
                (_SYLLABLES[a][0] + _SYLLABLES[b][0]).capitalize(),
                _SYLLABLES[a][1] + _SYLLABLES[b][1],
            )
        )
    return names


def _split_evenly(total: int, weights: np.ndarray) -> np.ndarray:
    """Integers proportional to ``weights`` summing to ``total`` (largest remainders)."""
    share = total * weights / weights.sum()
    counts = np.floor(share).astype(int)
    for i in np.argsort(counts - share)[: total - int(counts.sum())]:
        counts[i] += 1
    return counts


def _city_table(
    rng: np.random.Generator,
    city: tuple[str, str],
    base_price: float,
    districts: list[tuple[str, str]],
    counts: np.ndarray,
    months: np.ndarray,
    city_index: np.ndarray,
    phases: MarketPhases,
) -> pa.Table:
    """Every project-month with sales of one city."""
    columns: dict[str, list[np.ndarray]] = {c: [] for c in COLUMNS}
    for (district, district_zh), count in zip(districts, counts, strict=True):
        # Districts spread about ±35 % around their city, as in the real corpus.
        factor = float(np.clip(rng.lognormal(0.0, 0.3), 0.45, 2.2))
        district_log = np.log(base_price * factor)
        district_trend = city_index + rng.normal(0.0, 0.0015) * np.arange(len(months))
        for name in project_names(rng, int(count), taken=set()):
            active, log_price, units = simulate_project(rng, district_log, district_trend, phases)
            n = int(active.sum())
            for column, value in (
                ("city", city[0]),
                ("district", district),
                ("project", name.name),
                ("city_zh", city[1]),
                ("district_zh", district_zh),
                ("project_zh", name.name_zh),
            ):
                columns[column].append(np.full(n, value, dtype=object))
            columns["month"].append(months[active])
            columns["avg_price"].append(np.exp(log_price[active]))
            columns["units_sold"].append(units[active])
    arrays = {c: np.concatenate(v) for c, v in columns.items()}
    prices = arrays["avg_price"]
    add_outliers(rng, prices)
    arrays["avg_price"] = np.round(prices, 2)
    table = pa.table({c: arrays[c] for c in COLUMNS})
    # Dictionary-encoded names: a city's 10 M-row column of repeats stays small.
    return table.cast(_schema())


def _schema() -> pa.Schema:
    fields = []
    for c in COLUMNS:
        if c == "avg_price":
            fields.append(pa.field(c, pa.float64()))
        elif c == "units_sold":
            fields.append(pa.field(c, pa.int64()))
        else:
            fields.append(pa.field(c, pa.string()))
    return pa.schema(fields)


def city_plan(
    scale: int, seed: int
) -> Iterator[tuple[tuple[str, str], float, list[tuple[str, str]], int]]:
    """(city name, base price, district names, projects) of every city, in order."""
    rng = np.random.default_rng([seed, scale, 1])
    n_cities = len(REAL_CITIES) * scale
    city_names = _place_names(rng, n_cities)
    district_counts = np.array([REAL_CITIES[i % len(REAL_CITIES)][0] for i in range(n_cities)])
    projects = _split_evenly(REAL_PROJECTS * scale, district_counts.astype(float))
    for i, (name, n_districts) in enumerate(zip(city_names, district_counts, strict=True)):
        base = REAL_CITIES[i % len(REAL_CITIES)][1] * float(rng.lognormal(0.0, 0.1))
        districts = [(f"{d} District", f"{zh}区") for d, zh in _place_names(rng, int(n_districts))]
        yield (name[0], f"{name[1]}市"), base, districts, int(projects[i])


def write_scale_corpus(
    path: str | Path,
    scale: int,
    seed: int = 0,
    *,
    progress: ScaleProgress | None = None,
) -> ScaleCorpus:
    """Write the K = ``scale`` corpus to the Parquet file ``path`` (replaced atomically)."""
    if not 1 <= scale <= MAX_SCALE:
        raise DemoError(f"--scale must be between 1 and {MAX_SCALE}, got {scale}.")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    rng = np.random.default_rng([seed, scale, 2])
    phases = market_phases(rng, SCALE_MONTHS)
    months = np.array([m.iso for m in month_range(SCALE_START, SCALE_START + (SCALE_MONTHS - 1))])
    plan = list(city_plan(scale, seed))
    rows = districts = projects = 0
    try:
        with pq.ParquetWriter(partial, _schema(), compression="zstd") as writer:
            for done, (city, base, names, count) in enumerate(plan, start=1):
                counts = _allocate(rng, count, len(names))
                table = _city_table(
                    rng, city, base, names, counts, months,
                    city_log_index(rng, SCALE_MONTHS, phases), phases,
                )  # fmt: skip
                writer.write_table(table)
                rows += table.num_rows
                districts += len(names)
                projects += count
                if progress is not None:
                    progress(done, len(plan))
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)
    return ScaleCorpus(path, scale, len(plan), districts, projects, rows)


def _allocate(rng: np.random.Generator, n_projects: int, n_districts: int) -> np.ndarray:
    """Projects per district: uneven (Dirichlet shares) like the real corpus, ≥ 3 each."""
    least = 3 * n_districts
    return _split_evenly(n_projects - least, rng.dirichlet(np.full(n_districts, 2.0))) + 3
