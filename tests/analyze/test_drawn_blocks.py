"""The scenario draws, computed block by block in place, are the draws of the plain loop.

``scenarios._drawn`` draws a chunk's normals as it always did, then runs the per-cell
steps (correlation, normal CDF, interpolation) over blocks of scenarios in place; every
cell must come out bit for bit as the plain whole-chunk computation below gives it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pytest
from scipy.special import ndtr

from foretab.analyze import scenarios
from foretab.analyze.draw_positions import evenly_spaced as _evenly_spaced
from foretab.analyze.draw_positions import group_codes_of as _group_codes
from foretab.analyze.draw_positions import outer_places as _outer_places
from foretab.analyze.scenarios import (
    Copula,
    WindowTable,
    _hold,
    copula,
    using,
)
from foretab.core.plan import EntityRef


def _plain(
    table: WindowTable, n: int, groups: Sequence[object] | None, seed: int
) -> Iterator[tuple[int, np.ndarray]]:
    """The draws as computed before the blocks (the reference)."""
    dependence = copula()
    rho = dependence.months
    shared = min(dependence.shared, rho) if groups is not None else 0.0
    outer = min(dependence.outer, rho - shared) if groups is not None else 0.0
    rng = np.random.default_rng(seed)
    hold_rng = None if table.held is None else np.random.default_rng(seed + 2)
    n_entities, n_months, n_levels = table.values.shape
    codes = _group_codes(groups, n_entities) if shared > 0 else None
    group_shock = None if codes is None else rng.standard_normal((n, int(codes.max()) + 1))
    places = _group_codes(_outer_places(groups), n_entities) if outer > 0 else None
    outer_shock = None if places is None else rng.standard_normal((n, int(places.max()) + 1))
    passing = min(dependence.fleeting * (shared + outer), 1 - rho)
    fleeting = passing / (shared + outer) if passing > 0 else 0.0
    group_month = outer_month = None
    if fleeting > 0 and group_shock is not None:
        group_month = rng.standard_normal((*group_shock.shape, n_months))
    if fleeting > 0 and outer_shock is not None:
        outer_month = rng.standard_normal((*outer_shock.shape, n_months))
    lasting = 1 - fleeting
    chunk = max(1, scenarios.CHUNK_CELLS // max(1, n * n_months))
    levels = table.levels
    step = np.diff(levels)
    even = _evenly_spaced(levels.tobytes())
    index_of_level = np.arange(n_levels, dtype=float)
    for start in range(0, n_entities, chunk):
        stop = min(n_entities, start + chunk)
        size = stop - start
        own = max(rho - shared - outer + passing, 0.0)
        z = np.sqrt(own) * rng.standard_normal((n, size, 1))
        z = z + np.sqrt(max(1 - rho - passing, 0.0)) * rng.standard_normal((n, size, n_months))
        if group_shock is not None and codes is not None:
            z += np.sqrt(lasting * shared) * group_shock[:, codes[start:stop], None]
            if group_month is not None:
                z += np.sqrt(fleeting * shared) * group_month[:, codes[start:stop]]
        if outer_shock is not None and places is not None:
            z += np.sqrt(lasting * outer) * outer_shock[:, places[start:stop], None]
            if outer_month is not None:
                z += np.sqrt(fleeting * outer) * outer_month[:, places[start:stop]]
        u = ndtr(z)
        if even:
            pos = np.clip((u - levels[0]) / step[0], 0.0, n_levels - 1.0)
        else:
            pos = np.interp(u, levels, index_of_level)
        lower = np.minimum(pos.astype(np.intp), n_levels - 2)
        frac = pos - lower
        cell = (np.arange(size)[:, None] * n_months + np.arange(n_months)[None, :]) * n_levels
        flat = table.values[start:stop].reshape(-1)
        at = lower + cell[None]
        drawn = flat[at]
        drawn += frac * (flat[at + 1] - drawn)
        if hold_rng is not None and table.current is not None:
            _hold(drawn, table, start, stop, hold_rng)
        yield start, drawn


def _table(
    rng: np.random.Generator, entities: int, months: int, even: bool, held: bool
) -> WindowTable:
    levels = np.linspace(0.01, 0.99, 99) if even else np.sort(rng.uniform(0.01, 0.99, 21))
    base = rng.uniform(5_000, 60_000, (entities, months, 1))
    spread = np.sort(rng.normal(0, 1, (entities, months, levels.size)), axis=-1)
    values = base * (1 + 0.05 * spread)
    present = rng.random((entities, months)) < 0.9
    forecast = rng.random((entities, months)) < 0.7
    refs = tuple(EntityRef("C", f"D{e % 4}", f"P{e}") for e in range(entities))
    if not held:
        return WindowTable(refs, levels, values, present, forecast)
    share = np.where(rng.random(entities) < 0.5, rng.random(entities), 0.0)
    current = rng.uniform(5_000, 60_000, entities)
    return WindowTable(refs, levels, values, present, forecast, share, current)


@pytest.mark.parametrize("chunk_cells", [scenarios.CHUNK_CELLS, 5_000])
@pytest.mark.parametrize("block_cells", [scenarios.DRAW_BLOCK_CELLS, 700, 1])
def test_block_draws_are_the_plain_draws_bit_for_bit(
    chunk_cells: int, block_cells: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scenarios, "CHUNK_CELLS", chunk_cells)
    monkeypatch.setattr(scenarios, "DRAW_BLOCK_CELLS", block_cells)
    rng = np.random.default_rng(7)
    copulas = [None, Copula(0.8, 0.0, 0.0, 0.0), Copula(0.8, 0.3, 0.2, 0.5)]
    for case in range(24):
        entities, months = int(rng.integers(1, 40)), int(rng.integers(1, 13))
        table = _table(rng, entities, months, even=case % 3 != 0, held=case % 2 == 0)
        groups = None if case % 4 == 1 else [(r.outer, r.inner) for r in table.refs]
        n = int(rng.integers(1, 300))
        chosen = copulas[case % len(copulas)]
        with using(chosen):
            new = list(scenarios._drawn(table, n, groups, seed=case))
            old = list(_plain(table, n, groups, seed=case))
        assert [s for s, _ in new] == [s for s, _ in old]
        for (_, a), (_, b) in zip(new, old, strict=True):
            assert a.shape == b.shape and a.tobytes() == b.tobytes()
