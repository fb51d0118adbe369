"""Where a scenario's draws fall on the quantile grid, computed once per shape of draw.

``foretab.analyze.scenarios`` draws a window's values in two steps. First the copula's
normals are mixed (an entity's lasting and monthly errors, its group's and its outer
place's shocks) and mapped through the normal CDF to a position on the store's grid of
quantile levels: the lower of the two neighbouring quantiles and the fraction of the way
to the next. Then each (entity, month) cell's quantile function is read at those
positions. The first step is most of a draw's time (the normals and ``ndtr`` cost ~9 ns
a cell each) and depends only on the draw's *shape* (``DrawShape``: seed, scenarios,
entities, months, the grid, the entities' groups and outer places, the window months'
horizons, the copula), never on the forecast's values. Distinct questions of one shape
(a project's next three months; two projects of one district over 2022) draw the same
positions, so they are kept (``PositionCache``), bit for bit what a fresh computation
gives. Nothing of an answer is kept: each question's values are read at them afresh.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from foretab.analyze.scenarios import Copula

#: Draws of more cells than this (scenarios × entities × months) are not kept: a few
#: projects over a few months are (4,000 × 16 cells); a scope's tens or thousands of
#: projects, whose shapes rarely repeat, are computed chunk by chunk as they are drawn.
#: Over the QA test split's questions, 160 shapes of at most this size made 1,443 of the
#: 1,562 draws (1,283 of them a shape already drawn), larger ones 119 (20). 16 bytes a
#: cell: 1 MB at most an entry.
MAX_KEPT_CELLS = 65_536
#: The kept positions of one process, in bytes (the least recently used go first).
MAX_KEPT_BYTES = 64 * 2**20


@dataclass(frozen=True, slots=True)
class ChunkPositions:
    """One chunk of entities' draw positions, ``[scenarios, size, months]`` arrays.

    ``lower`` indexes the chunk's ``values[start:stop].reshape(-1)``: the lower of the
    two neighbouring quantiles of each draw; ``fraction`` is the way from it to the next.
    Read-only: shared by every question of the shape.
    """

    start: int
    stop: int
    lower: np.ndarray
    fraction: np.ndarray

    @property
    def nbytes(self) -> int:
        return int(self.lower.nbytes + self.fraction.nbytes)


@dataclass(frozen=True, slots=True)
class DrawShape:
    """Everything a draw's positions depend on (the key they are kept under)."""

    n: int
    seed: int
    copula: Copula
    n_entities: int
    n_months: int
    levels: bytes  # the grid of quantile levels, float64
    groups: bytes | None  # each entity's group code (intp), None: each its own group
    places: bytes | None  # each entity's outer place code (intp)
    horizon: bytes | None  # each window month's months after R (float64)
    chunk_cells: int
    block_cells: int

    @classmethod
    def of(
        cls,
        *,
        n: int,
        seed: int,
        copula: Copula,
        values_shape: tuple[int, int, int],
        levels: np.ndarray,
        groups: Sequence[object] | None,
        horizon: np.ndarray | None,
        chunk_cells: int,
        block_cells: int,
    ) -> DrawShape:
        n_entities, n_months, _ = values_shape
        group_codes = outer_codes = None
        if groups is not None:
            group_codes = group_codes_of(groups, n_entities).tobytes()
            outer_codes = group_codes_of(outer_places(groups), n_entities).tobytes()
        return cls(
            n,
            seed,
            copula,
            n_entities,
            n_months,
            np.ascontiguousarray(levels, dtype=float).tobytes(),
            group_codes,
            outer_codes,
            None if horizon is None else np.ascontiguousarray(horizon, dtype=float).tobytes(),
            chunk_cells,
            block_cells,
        )

    @property
    def cells(self) -> int:
        return self.n * self.n_entities * self.n_months


class PositionCache:
    """Positions of recent draw shapes, least recently used dropped past ``max_bytes``.

    Thread-safe (a server's engines draw in threads); two threads missing one shape at
    once both compute it, and the results are the same.
    """

    def __init__(self, max_bytes: int = MAX_KEPT_BYTES, max_cells: int = MAX_KEPT_CELLS) -> None:
        self.max_bytes = max_bytes
        self.max_cells = max_cells
        self._kept: OrderedDict[DrawShape, tuple[ChunkPositions, ...]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def positions(self, shape: DrawShape) -> Iterator[ChunkPositions]:
        """``shape``'s positions chunk by chunk: kept ones, or computed (and kept if small)."""
        if shape.cells > self.max_cells:
            yield from compute_positions(shape)
            return
        with self._lock:
            kept = self._kept.get(shape)
            if kept is not None:
                self._kept.move_to_end(shape)
                self.hits += 1
        if kept is None:
            kept = tuple(compute_positions(shape))
            self._keep(shape, kept)
        yield from kept

    def _keep(self, shape: DrawShape, chunks: tuple[ChunkPositions, ...]) -> None:
        size = sum(c.nbytes for c in chunks)
        with self._lock:
            self.misses += 1
            if shape in self._kept or size > self.max_bytes:
                return
            self._kept[shape] = chunks
            self._bytes += size
            while self._bytes > self.max_bytes:
                _, dropped = self._kept.popitem(last=False)
                self._bytes -= sum(c.nbytes for c in dropped)

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
            self._bytes = 0


#: The process's kept positions (``scenarios._drawn`` reads through it).
POSITIONS = PositionCache()


def compute_positions(shape: DrawShape) -> Iterator[ChunkPositions]:
    """``shape``'s positions, chunk by chunk of entities, from its seeded normals.

    Everything it reads is in ``shape`` (the key positions are kept under), the entities'
    group and outer place codes too.
    The normals are drawn in the order they always were, and each cell is computed by the
    same operations, block by block of scenarios (a block's arrays stay in the cache).
    """
    from scipy.special import ndtr  # LightGBM's own dependency

    dependence, n, n_entities, n_months = shape.copula, shape.n, shape.n_entities, shape.n_months
    levels = np.frombuffer(shape.levels)
    n_levels = levels.size
    horizon = None if shape.horizon is None else np.frombuffer(shape.horizon)
    grouped = shape.groups is not None and shape.places is not None
    rho = dependence.months
    # A group's shock is part of each entity's persistent error, never more than all of it.
    shared = min(dependence.shared, rho) if grouped else 0.0
    outer = min(dependence.outer, rho - shared) if grouped else 0.0
    rng = np.random.default_rng(shape.seed)
    codes = _codes(shape.groups) if shared > 0 else None
    group_shock = None if codes is None else rng.standard_normal((n, int(codes.max()) + 1))
    # Drawn after the group shocks: scenarios without an outer shock are unchanged.
    places = _codes(shape.places) if outer > 0 else None
    outer_shock = None if places is None else rng.standard_normal((n, int(places.max()) + 1))
    # The fleeting part of the shocks: a shock per place and month, drawn after the lasting
    # ones (without it the scenarios are unchanged). It replaces month noise, so it never
    # exceeds it (comonotone months: the shocks last).
    passing = min(dependence.fleeting * (shared + outer), 1 - rho)
    fleeting = passing / (shared + outer) if passing > 0 else 0.0
    group_month = outer_month = None
    if fleeting > 0 and group_shock is not None:
        group_month = rng.standard_normal((*group_shock.shape, n_months))
    if fleeting > 0 and outer_shock is not None:
        outer_month = rng.standard_normal((*outer_shock.shape, n_months))
    lasting = 1 - fleeting
    # The growing part: a random walk per place over the window's months after R, drawn
    # after everything above (without it the scenarios are unchanged).
    walk = _walk_variance(horizon, dependence.growth * (shared + outer), 1 - rho - passing)
    group_walk = outer_walk = None
    if walk is not None and group_shock is not None:
        group_walk = _walk(rng, group_shock.shape, walk * shared / (shared + outer))
    if walk is not None and outer_shock is not None:
        outer_walk = _walk(rng, outer_shock.shape, walk * outer / (shared + outer))
    # The shifting part: a share of the group shock's variance passes, month by month, to
    # a random walk per outer place, drawn after everything above (without it the
    # scenarios are unchanged).
    moved = (
        None if group_shock is None else _walk_variance(horizon, dependence.shift * shared, shared)
    )
    passed_codes = passed_walk = None
    if moved is not None:
        passed_codes = _codes(shape.places) if places is None else places
        passed_walk = _walk(rng, (n, int(passed_codes.max()) + 1), moved)
    # The group shock's scales: per month once part of it has passed to the outer place.
    group_lasting: float | np.ndarray = np.sqrt(lasting * shared)
    group_passing: float | np.ndarray = np.sqrt(fleeting * shared)
    if moved is not None:
        left = np.sqrt(1 - moved / shared)  # [months]: the share of the group shock kept
        group_lasting = group_lasting * left
        group_passing = group_passing * left
    chunk = max(1, shape.chunk_cells // max(1, n * n_months))
    step = np.diff(levels)
    even = evenly_spaced(shape.levels)  # the store's 1%..99% grid: no search needed
    index_of_level = np.arange(n_levels, dtype=float)
    own = np.sqrt(max(rho - shared - outer + passing, 0.0))
    month_noise: float | np.ndarray = np.sqrt(max(1 - rho - passing, 0.0))
    if walk is not None:  # per month: the walk takes its variance from the month noise
        month_noise = np.sqrt(np.maximum(1 - rho - passing - walk, 0.0))
    for start in range(0, n_entities, chunk):
        stop = min(n_entities, start + chunk)
        size = stop - start
        lasting_z = rng.standard_normal((n, size, 1))
        # Becomes the fractions, block by block, in place.
        z = rng.standard_normal((n, size, n_months))
        lower = np.empty(z.shape, dtype=np.intp)
        g_codes = None if group_shock is None or codes is None else codes[start:stop]
        o_codes = None if outer_shock is None or places is None else places[start:stop]
        w_codes = None if passed_codes is None else passed_codes[start:stop]
        # Flat indices into this chunk's [entities, months, levels] values.
        cell = (np.arange(size)[:, None] * n_months + np.arange(n_months)[None, :]) * n_levels
        block = max(1, shape.block_cells // max(1, size * n_months))
        for lo in range(0, n, block):
            hi = min(n, lo + block)
            zb = z[lo:hi]
            zb *= month_noise
            zb += own * lasting_z[lo:hi]
            if group_shock is not None and g_codes is not None:
                zb += group_lasting * group_shock[lo:hi, g_codes, None]
                if group_month is not None:
                    zb += group_passing * group_month[lo:hi, g_codes]
                if group_walk is not None:
                    zb += group_walk[lo:hi, g_codes]
            if outer_shock is not None and o_codes is not None:
                zb += np.sqrt(lasting * outer) * outer_shock[lo:hi, o_codes, None]
                if outer_month is not None:
                    zb += np.sqrt(fleeting * outer) * outer_month[lo:hi, o_codes]
                if outer_walk is not None:
                    zb += outer_walk[lo:hi, o_codes]
            if passed_walk is not None and w_codes is not None:
                zb += passed_walk[lo:hi, w_codes]
            # Draws interpolate each quantile function at its level (never beyond its
            # ends): the position on the one shared grid first, then between the two
            # neighbouring quantiles of each (entity, month) cell.
            ndtr(zb, out=zb)
            if even:
                zb -= levels[0]
                zb /= step[0]
                pos = np.clip(zb, 0.0, n_levels - 1.0, out=zb)
            else:
                pos = np.interp(zb, levels, index_of_level)
            low = lower[lo:hi]
            np.copyto(low, pos, casting="unsafe")  # as ``astype(np.intp)``: truncated
            np.minimum(low, n_levels - 2, out=low)
            pos -= low  # the fraction between the two quantiles
            if pos is not zb:
                zb[...] = pos
            low += cell[None]
        lower.flags.writeable = False
        z.flags.writeable = False
        yield ChunkPositions(start, stop, lower, z)


def read_at(values: np.ndarray, positions: ChunkPositions, block_cells: int) -> np.ndarray:
    """``[scenarios, size, months]``: the chunk's quantile functions read at ``positions``.

    ``values`` is the chunk's ``[size, months, levels]``; block by block of scenarios, by
    the operations a draw always used (bit for bit).
    """
    flat = np.ascontiguousarray(values).reshape(-1)
    above = flat[1:]  # above[i] is flat[i + 1]
    lower, fraction = positions.lower, positions.fraction
    n, size, n_months = lower.shape
    drawn = np.empty(lower.shape)
    block = max(1, block_cells // max(1, size * n_months))
    for lo in range(0, n, block):
        hi = min(n, lo + block)
        low = np.take(flat, lower[lo:hi])
        high = np.take(above, lower[lo:hi])
        high -= low
        high *= fraction[lo:hi]
        low += high
        drawn[lo:hi] = low
    return drawn


def _walk_variance(horizon: np.ndarray | None, per_month: float, room: float) -> np.ndarray | None:
    """``[months]``: the walk's variance at each window month; None when nothing grows.

    ``per_month`` of variance per month after R, never more than ``room`` (the month
    noise): a walk that has taken all of it stops growing. Months up to R: 0.
    """
    if horizon is None or per_month <= 0 or room <= 0 or not (horizon > 0).any():
        return None
    return np.minimum(per_month * np.clip(horizon, 0, None), room).astype(float)


def _walk(rng: np.random.Generator, shape: tuple[int, ...], variance: np.ndarray) -> np.ndarray:
    """``[*shape, months]``: a random walk per place with ``variance`` at each month.

    Steps between the distinct horizons in increasing order, so two months share the
    walk up to the earlier one: ``cov = variance[earlier]``.
    """
    steps_at = np.unique(variance)
    gaps = np.diff(steps_at, prepend=0.0)
    walked = np.cumsum(rng.standard_normal((*shape, steps_at.size)) * np.sqrt(gaps), axis=-1)
    return walked[..., np.searchsorted(steps_at, variance)]


@lru_cache(maxsize=16)
def evenly_spaced(levels: bytes) -> bool:
    """True when the grid's steps are equal (``np.allclose``); one grid serves a store."""
    step = np.diff(np.frombuffer(levels))
    return bool(np.allclose(step, step[0]))


def outer_places(groups: Sequence[object] | None) -> list[object] | None:
    """Each group's outer place: the first name of an ``(outer, inner)`` group, else itself."""
    if groups is None:
        return None
    return [g[0] if isinstance(g, tuple) and len(g) == 2 else g for g in groups]


def group_codes_of(groups: Sequence[object] | None, n: int) -> np.ndarray:
    """Each entity's group as a code 0, 1, ... in order of first appearance."""
    if groups is None:
        return np.arange(n, dtype=np.intp)
    seen: dict[object, int] = {}
    return np.asarray([seen.setdefault(g, len(seen)) for g in groups], dtype=np.intp)


def _codes(packed: bytes | None) -> np.ndarray:
    """A shape's group or place codes (``group_codes_of``, as ``DrawShape`` holds them)."""
    assert packed is not None  # drawn with shocks only when the entities have groups
    return np.frombuffer(packed, dtype=np.intp)
