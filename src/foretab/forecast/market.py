"""Market signals of the groups a series belongs to: its district, its city, the corpus.

A project's own history is short and sparse; its district and city are not. For every
group and month this keeps two causal signals computed from the panel the model is
fitted on (month ``t`` uses observations at or before ``t`` only):

* ``change[g, t]``: the median per-month log price change of the group's projects
  observed at ``t`` (against each project's previous observation at most
  ``MAX_GAP`` months earlier) — the market's trend, and by calendar month its season;
* ``level[g, t]``: the median log price of the group's observations at ``t`` — so a
  project's level relative to its district can be a feature.

Windows read these up to their last month, so a model trained on them and forecasting
from month R sees exactly what was known at R.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from foretab.forecast.base import Place
from foretab.forecast.features import changes_since_previous, row_nanmedian

#: Group levels, most specific first; "all" is the whole panel (always known).
LEVELS = ("inner", "outer", "all")  # the entity's inner and outer group levels
ALL = "*"
#: A change over a longer gap says little about one month's market.
MAX_GAP = 3
#: Fewer contributions than this in a month: the signal is missing, not noisy.
MIN_COUNT = 3
TREND_SPANS = (3, 6, 12)
LEVEL_SPAN = 6
#: At most this many group reads derive only the groups read (``Market.season_at``).
SEASON_ON_DEMAND = 64


def place_keys(outer: str, inner: str) -> tuple[str, str]:
    """The keys an entity in group ``inner`` of ``outer`` has in a ``Market``."""
    return f"{outer}\x1f{inner}", outer


@dataclass(frozen=True, slots=True)
class Market:
    """Per-group monthly signals ``[G, T]``; ``keys`` name the groups (``ALL`` included)."""

    keys: tuple[str, ...]
    change: np.ndarray
    level: np.ndarray
    #: ``[G, T+1]`` running sums of ``change`` (NaN as 0) and of its seen months, and each
    #: key's row: derived once, as a question's windows read them. At 100x the corpus
    #: (11,001 groups) recomputing them took ~6 ms of a 14 ms forecast question; at 1x
    #: (111 groups) it made no difference (docs/experiments.md, issue 26).
    running: np.ndarray = field(init=False, repr=False, compare=False)
    seen_running: np.ndarray = field(init=False, repr=False, compare=False)
    index: dict[str, int] = field(init=False, repr=False, compare=False)
    #: The ``[T, 12]`` seasonal tables (``_season_tables``) of the groups read so far, by
    #: group row, or every group's at once (``season``): derived when first read, not
    #: when a model loads (0.5 s for 11,001 groups at 100x; a question reads three).
    _season_rows: dict[int, np.ndarray] = field(init=False, repr=False, compare=False)
    _season_all: list[np.ndarray] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        start = np.zeros((len(self.keys), 1))
        running = np.cumsum(np.nan_to_num(self.change), axis=1)
        seen = np.cumsum(np.isfinite(self.change), axis=1)
        object.__setattr__(self, "running", np.concatenate([start, running], axis=1))
        object.__setattr__(self, "seen_running", np.concatenate([start, seen], axis=1))
        object.__setattr__(self, "index", {k: i for i, k in enumerate(self.keys)})
        object.__setattr__(self, "_season_rows", {})
        object.__setattr__(self, "_season_all", [])

    @property
    def season(self) -> np.ndarray:
        """``[G, T, 12]``: every group's seasonal tables (``_season_tables``), derived once."""
        if not self._season_all:
            self._season_all.append(_season_tables(self.change))
        return self._season_all[0]

    def season_at(self, groups: np.ndarray, end: np.ndarray) -> np.ndarray:
        """``[m, levels, 12]``: ``season[groups, end[:, None]]``, deriving only those groups.

        A group's table depends on its own row of ``change`` only (running sums along
        the months), so a few groups' tables are the same numbers as every group's. Many
        windows (training, a backtest) derive every group's once.
        """
        if self._season_all or groups.size > SEASON_ON_DEMAND:
            return self.season[groups, end[:, None]]
        rows = self._season_rows
        missing = sorted({int(g) for g in groups.ravel()} - rows.keys())
        if missing:
            for g, table in zip(missing, _season_tables(self.change[missing]), strict=True):
                rows[g] = table
        out = np.empty((*groups.shape, 12))
        for i, j in np.ndindex(groups.shape):
            out[i, j] = rows[int(groups[i, j])][end[i]]
        return out

    @property
    def months(self) -> int:
        return int(self.change.shape[1])

    def members(self, places: Sequence[Place] | None, n: int) -> np.ndarray:
        """``[n, 3]`` group indices (district, city, all) per series; -1 where unknown."""
        index = self.index
        out = np.full((n, len(LEVELS)), -1, dtype=int)
        out[:, 2] = index[ALL]
        if places is not None:
            for i, place in enumerate(places):
                if place is not None:
                    out[i, 0] = index.get(place[0], -1)
                    out[i, 1] = index.get(place[1], -1)
        return out

    @classmethod
    def build(cls, panel: np.ndarray, places: Sequence[Place] | None = None) -> Market:
        """Signals of every district and city in ``places`` (one per panel row) and of all."""
        n, t = panel.shape
        keys: list[str] = [ALL]
        member = np.zeros((n, len(LEVELS)), dtype=int)
        member[:, :2] = -1
        if places is not None:
            known = sorted({k for p in places if p is not None for k in p})
            keys += known
            index = {k: i for i, k in enumerate(keys)}
            for i, place in enumerate(places):
                if place is not None:
                    member[i, 0], member[i, 1] = index[place[0]], index[place[1]]
        with np.errstate(invalid="ignore", divide="ignore"):
            logp = np.log(panel)
        import pandas as pd  # here, not at import: the CLI starts without pandas

        change = per_month_change(logp)
        g = len(keys)
        out_change = np.full((g, t), np.nan)
        out_level = np.full((g, t), np.nan)
        for level in range(len(LEVELS)):
            rows = member[:, level]
            for values, out in ((change, out_change), (logp, out_level)):
                r, c = np.nonzero(np.isfinite(values) & (rows >= 0)[:, None])
                if r.size == 0:
                    continue
                frame = pd.DataFrame({"g": rows[r], "t": c, "v": values[r, c]})
                stats = frame.groupby(["g", "t"])["v"].agg(["median", "size"])
                stats = stats[stats["size"] >= MIN_COUNT]
                gi = stats.index.get_level_values(0).to_numpy()
                ti = stats.index.get_level_values(1).to_numpy()
                out[gi, ti] = stats["median"].to_numpy()
        return cls(tuple(keys), out_change, out_level)


def per_month_change(logp: np.ndarray) -> np.ndarray:
    """``[n, T]``: (log p_t − log p_prev) / gap where p_prev is at most MAX_GAP back."""
    change, gap = changes_since_previous(logp)
    ok = np.isfinite(change) & (gap <= MAX_GAP)
    return np.divide(change, gap, out=np.full(change.shape, np.nan), where=ok)


def market_features(
    market: Market, member: np.ndarray, end: np.ndarray, level: np.ndarray, horizon: int
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Per window ``(static [m, F], seasonal [m, horizon, len(LEVELS)], names)``.

    ``member [m, 3]`` are the windows' groups, ``end [m]`` the panel column each window's
    history ends at, ``level [m]`` its last observed price. The seasonal part is, per
    horizon ``h``, the group's mean de-trended change summed over the months ``end+1 ..
    end+h`` by calendar month (months ``≡ end+k mod 12`` at or before ``end``).
    """
    m = len(end)
    t = market.months
    csum, seen = market.running, market.seen_running
    # Every level and span in one step each (a question's one or two windows: numpy's
    # per-call cost is what counts); the same values as a loop over them.
    e = np.clip(end, 0, t - 1)
    ok = ((end >= 0) & (end < t))[:, None] & (member >= 0)  # [m, levels]
    gs = np.where(ok, member, 0)
    spans = np.asarray(TREND_SPANS)
    start = np.clip(e[:, None] - spans[None, :] + 1, 0, None)[:, None, :]  # [m, 1, spans]
    at_end = (e + 1)[:, None, None]
    total = csum[gs[:, :, None], at_end] - csum[gs[:, :, None], start]
    count = seen[gs[:, :, None], at_end] - seen[gs[:, :, None], start]
    # Missing months count as no change; too few seen months: missing.
    trend = np.where(ok[:, :, None] & (count >= np.maximum(1, spans // 2)), total, np.nan)
    placed = [li for li, name in enumerate(LEVELS) if name != "all"]
    cols_back = e[:, None] - np.arange(LEVEL_SPAN)[None, :]
    block = market.level[gs[:, placed, None], np.clip(cols_back, 0, None)[:, None, :]]
    block[(cols_back < 0)[:, None, :] | ~ok[:, placed, None]] = np.nan
    with np.errstate(invalid="ignore", divide="ignore"):
        medians = row_nanmedian(block.reshape(-1, LEVEL_SPAN)).reshape(m, len(placed))
        rel_level = np.log(level)[:, None] - medians
    cols: list[np.ndarray] = []
    names: list[str] = []
    for li, name in enumerate(LEVELS):
        cols.append(trend[:, li])
        names += [f"{name}_trend{span}" for span in TREND_SPANS]
        if li in placed:
            cols.append(rel_level[:, placed.index(li), None])
            names.append(f"{name}_rel_level")
    seasonal = _seasonal_paths(market.season_at(gs, e), e, horizon, ok)
    return np.concatenate(cols, axis=1), seasonal, names


def _season_tables(change: np.ndarray) -> np.ndarray:
    """``[G, T, 12]``: at each month, the group's mean de-trended change by column mod 12.

    Entry ``[g, e, r]`` averages ``change[g, s] − mean(change[g, ≤e])`` over ``s ≤ e``
    with ``s ≡ r (mod 12)``; NaN where no such month was seen.
    """
    g, t = change.shape
    ch = change
    fin = np.isfinite(ch)
    cum_all = np.cumsum(np.nan_to_num(ch), axis=1)
    cnt_all = np.cumsum(fin, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_all = cum_all / cnt_all
    out = np.full((g, t, 12), np.nan)
    for r in range(12):
        mask = (np.arange(t) % 12 == r)[None, :] & fin
        s = np.cumsum(np.where(mask, ch, 0.0), axis=1)
        c = np.cumsum(mask, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[:, :, r] = np.where(c > 0, s / c - mean_all, np.nan)
    return out


def _seasonal_paths(table: np.ndarray, e: np.ndarray, horizon: int, ok: np.ndarray) -> np.ndarray:
    """``[m, horizon, levels]``: cumulative seasonal effect over months e+1..e+h (NaN as 0).

    ``table``: ``[m, levels, 12]``, each window's groups' seasonal tables at its end.
    """
    ahead = (e[:, None] + np.arange(1, horizon + 1)[None, :]) % 12
    picked = np.take_along_axis(table, ahead[:, None, :], axis=2)
    out = np.cumsum(np.nan_to_num(picked), axis=2)
    out[~ok] = np.nan
    return np.ascontiguousarray(out.transpose(0, 2, 1))
