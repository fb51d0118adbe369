"""Kept draw positions: a shape's positions serve any values, and only that shape.

``foretab.analyze.draw_positions`` keeps where each scenario's draws fall on the quantile
grid per draw shape. A draw through kept positions must be bit for bit the draw computed
afresh, for any forecast values; a shape that differs in anything the positions depend
on (groups, places, horizon, copula, seed, scenarios, grid) must never get another's.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pytest

from foretab.analyze import draw_positions, scenarios
from foretab.analyze.draw_positions import DrawShape, PositionCache
from foretab.analyze.scenarios import Copula, WindowTable, draw_targets, using
from foretab.core.plan import Aggregate, EntityRef


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch) -> Iterator[PositionCache]:
    """A fresh cache of the process's kind, in place of the process's own."""
    fresh = PositionCache()
    monkeypatch.setattr(scenarios, "POSITIONS", fresh)
    yield fresh


def _table(
    rng: np.random.Generator,
    places: Sequence[tuple[str, str]],
    months: int,
    *,
    levels: np.ndarray | None = None,
    horizon: np.ndarray | None = None,
) -> WindowTable:
    levels = np.linspace(0.01, 0.99, 99) if levels is None else levels
    refs = tuple(EntityRef(city, district, f"P{e}") for e, (city, district) in enumerate(places))
    base = rng.uniform(5_000, 60_000, (len(refs), months, 1))
    spread = np.sort(rng.normal(0, 1, (len(refs), months, levels.size)), axis=-1)
    present = rng.random((len(refs), months)) < 0.9
    forecast = np.ones((len(refs), months), dtype=bool)
    return WindowTable(refs, levels, base * (1 + 0.05 * spread), present, forecast, horizon=horizon)


def _fresh(table: WindowTable, groups: Sequence[object] | None, n: int, seed: int) -> np.ndarray:
    """The draws computed afresh (nothing kept), the reference."""
    shape = DrawShape.of(
        n=n,
        seed=seed,
        copula=scenarios.copula(),
        values_shape=table.values.shape,
        levels=table.levels,
        groups=groups,
        horizon=table.horizon,
        chunk_cells=scenarios.CHUNK_CELLS,
        block_cells=scenarios.DRAW_BLOCK_CELLS,
    )
    return np.concatenate(
        [
            draw_positions.read_at(table.values[c.start : c.stop], c, scenarios.DRAW_BLOCK_CELLS)
            for c in draw_positions.compute_positions(shape)
        ],
        axis=1,
    )


def _drawn(table: WindowTable, groups: Sequence[object] | None, n: int, seed: int) -> np.ndarray:
    return np.concatenate([d for _, d in scenarios._drawn(table, n, groups, seed)], axis=1)


def test_kept_positions_read_other_values_as_a_fresh_draw(cache: PositionCache) -> None:
    rng = np.random.default_rng(1)
    places = [("Nanjing", "Jiangning"), ("Nanjing", "Jiangning"), ("Nanjing", "Gulou")]
    first, second = _table(rng, places, 3), _table(rng, places, 3)
    groups = scenarios.groups_of(first.refs)
    _drawn(first, groups, 500, 0)
    assert (cache.hits, cache.misses) == (0, 1)
    again = _drawn(second, groups, 500, 0)
    assert (cache.hits, cache.misses) == (1, 1)
    assert again.tobytes() == _fresh(second, groups, 500, 0).tobytes()
    # Different values, different draws: the values are read, not remembered.
    assert again.tobytes() != _drawn(first, groups, 500, 0).tobytes()


def test_whole_questions_are_the_same_with_positions_kept(cache: PositionCache) -> None:
    rng = np.random.default_rng(2)
    places = [("Wuhan", "Hongshan")] * 2
    tables = [_table(rng, places, 4) for _ in range(3)]
    groups = scenarios.groups_of(tables[0].refs)
    kept = [draw_targets(t, Aggregate.MEAN, n=800, groups=groups) for t in tables]
    assert cache.hits == 2
    cache.clear()
    for table, targets in zip(tables, kept, strict=True):
        cache.clear()
        assert draw_targets(table, Aggregate.MEAN, n=800, groups=groups).tobytes() == (
            targets.tobytes()
        )


@pytest.mark.parametrize(
    "change",
    ["groups", "places", "horizon", "copula", "seed", "scenarios", "levels", "months"],
)
def test_a_shape_never_gets_another_shapes_positions(cache: PositionCache, change: str) -> None:
    rng = np.random.default_rng(3)
    same_district = [("Nanjing", "Jiangning"), ("Nanjing", "Jiangning")]
    other = {
        "groups": [("Nanjing", "Jiangning"), ("Nanjing", "Gulou")],  # same city, two districts
        "places": [("Nanjing", "Jiangning"), ("Wuhan", "Jiangning")],  # two cities
    }
    months = 3
    horizon = np.array([1.0, 2.0, 3.0])
    base = _table(rng, same_district, months, horizon=horizon)
    n, seed, chosen = 400, 0, Copula(0.7, 0.1, 0.1, 0.0, 0.2)
    with using(chosen):
        _drawn(base, scenarios.groups_of(base.refs), n, seed)
    table, kind = base, chosen
    if change in other:
        table = _table(rng, other[change], months, horizon=horizon)
    elif change == "horizon":
        table = _table(rng, same_district, months, horizon=np.array([2.0, 3.0, 4.0]))
    elif change == "levels":
        table = _table(rng, same_district, months, levels=np.linspace(0.05, 0.95, 99))
    elif change == "months":
        table = _table(rng, same_district, months + 1, horizon=np.array([1.0, 2.0, 3.0, 4.0]))
    elif change == "copula":
        kind = Copula(0.7, 0.1, 0.1, 0.0, 0.3)
    elif change == "seed":
        seed = 1
    elif change == "scenarios":
        n = 401
    groups = scenarios.groups_of(table.refs)
    with using(kind):
        drawn = _drawn(table, groups, n, seed)
        assert cache.hits == 0 and cache.misses == 2
        assert drawn.tobytes() == _fresh(table, groups, n, seed).tobytes()


def test_large_draws_are_not_kept_and_the_least_recent_go_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cache = PositionCache(max_bytes=3 * 16 * 100 * 2, max_cells=100 * 2)
    monkeypatch.setattr(scenarios, "POSITIONS", cache)
    rng = np.random.default_rng(4)
    one = _table(rng, [("Nanjing", "Jiangning")], 2)
    for seed in range(4):  # 200 cells, 6,400 bytes each: three fit
        _drawn(one, None, 100, seed)
    assert len(cache._kept) == 3 and cache._bytes <= cache.max_bytes
    _drawn(one, None, 100, 0)  # the first was dropped
    assert cache.hits == 0
    _drawn(one, None, 100, 3)
    assert cache.hits == 1
    big = _table(rng, [("Nanjing", "Jiangning")], 3)  # 300 cells: never kept
    _drawn(big, None, 100, 0)
    _drawn(big, None, 100, 0)
    assert cache.hits == 1 and all(k.cells <= 200 for k in cache._kept)


def test_kept_positions_are_read_only(cache: PositionCache) -> None:
    table = _table(np.random.default_rng(5), [("Nanjing", "Jiangning")], 2)
    _drawn(table, None, 50, 0)
    (chunks,) = cache._kept.values()
    for chunk in chunks:
        with pytest.raises(ValueError):
            chunk.lower[0, 0, 0] = 0
        with pytest.raises(ValueError):
            chunk.fraction[0, 0, 0] = 0.0
