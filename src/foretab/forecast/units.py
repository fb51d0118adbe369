"""Units sold per project-month: a LightGBM count model with 80% intervals (issue 30).

Units are counts, often zero or missing (a month without a row: no sales recorded), and
their noise grows with their level, so the point model is a Poisson regression
(LightGBM's ``poisson`` objective, a log link) rather than the price model's log-level
regression; the interval's ends are two quantile boosters (10% and 90%) on the same
features. One row per (project, origin, horizon): from the history up to an origin, the
units ``h`` months later (only months with a row are targets, as only those are scored).

Features (``features``) read the 12 months to the origin, a month without a row counting
as 0 sold: the last three months, the means of the last 3 / 6 / 12, how many of the 12
had a row, months since the last row, the horizon and the target's calendar month.

Every booster is saved as LightGBM's own text model (``to_texts`` / ``from_texts``):
data only, as the price model (docs/design.md §1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from foretab.forecast.base import MAX_HORIZON

WINDOW = 12
#: Training origins: the last this many months whose targets are still history.
ORIGINS = 24
LEVEL = 0.8
PARAMS: dict[str, object] = {
    "learning_rate": 0.05,
    "num_leaves": 31,
    "min_data_in_leaf": 50,
    "feature_fraction": 0.9,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "verbose": -1,
    "num_threads": 2,
}
ROUNDS = 300
#: Below this many training rows one thread fits faster than two (thread start-up costs
#: more than it saves: the 36-project test store's 6,353 rows fit in 0.55 s of CPU on one,
#: 2.4 s on two); the corpus (far above it) keeps ``PARAMS``' two.
SMALL_FIT_ROWS = 100_000
FEATURES = (
    "last",
    "last_1",
    "last_2",
    "mean_3",
    "mean_6",
    "mean_12",
    "rows_12",
    "since_row",
    "horizon",
    "target_month",
)


def features(units: np.ndarray, origin: int, horizon: int, first_month: int) -> np.ndarray:
    """``[n, len(FEATURES)]`` for every row of ``units`` at ``origin`` (a column index).

    ``first_month``: the calendar month (1–12) of column 0.
    """
    window = units[:, max(0, origin - WINDOW + 1) : origin + 1]
    if window.shape[1] < WINDOW:
        pad = np.full((units.shape[0], WINDOW - window.shape[1]), np.nan)
        window = np.concatenate([pad, window], axis=1)
    seen = np.isfinite(window)
    sold = np.where(seen, window, 0.0)
    since_row = np.where(seen.any(axis=1), np.argmax(seen[:, ::-1], axis=1), WINDOW)
    target_month = (first_month - 1 + origin + horizon) % 12 + 1
    n = units.shape[0]
    return np.column_stack(
        [
            sold[:, -1],
            sold[:, -2],
            sold[:, -3],
            sold[:, -3:].mean(axis=1),
            sold[:, -6:].mean(axis=1),
            sold.mean(axis=1),
            seen.sum(axis=1),
            since_row,
            np.full(n, horizon),
            np.full(n, target_month),
        ]
    ).astype(float)


def training_rows(units: np.ndarray, first_month: int) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` over the last ``ORIGINS`` origins, every horizon whose target is a row."""
    t = units.shape[1]
    xs, ys = [], []
    for origin in range(max(WINDOW - 1, t - 1 - ORIGINS), t - 1):
        for h in range(1, min(MAX_HORIZON, t - 1 - origin) + 1):
            y = units[:, origin + h]
            rows = np.isfinite(y) & np.isfinite(
                units[:, max(0, origin - WINDOW + 1) : origin + 1]
            ).any(axis=1)
            if rows.any():
                xs.append(features(units[rows], origin, h, first_month))
                ys.append(y[rows])
    if not xs:
        raise ValueError("no entity has units to learn from in the history")
    return np.concatenate(xs), np.concatenate(ys)


def activity_rows(units: np.ndarray, first_month: int) -> tuple[np.ndarray, np.ndarray]:
    """``(X, has_row)``: as ``training_rows``, every target month, labelled 1 if it has a row.

    The activity booster's rows: whether a project with a row in the 12 months to the
    origin has one ``h`` months later (about 60% do on the corpus).
    """
    t = units.shape[1]
    xs, ys = [], []
    for origin in range(max(WINDOW - 1, t - 1 - ORIGINS), t - 1):
        for h in range(1, min(MAX_HORIZON, t - 1 - origin) + 1):
            rows = np.isfinite(units[:, max(0, origin - WINDOW + 1) : origin + 1]).any(axis=1)
            if rows.any():
                xs.append(features(units[rows], origin, h, first_month))
                ys.append(np.isfinite(units[rows, origin + h]).astype(float))
    if not xs:
        raise ValueError("no entity has units to learn from in the history")
    return np.concatenate(xs), np.concatenate(ys)


@dataclass(frozen=True, slots=True)
class UnitsForecast:
    """``[n, h]`` point forecasts and the 80% interval's ends, for a month with a row.

    ``active``: the probability that the month has a row at all (the activity booster;
    ``None`` without one).
    """

    value: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    active: np.ndarray | None = None


class UnitsModel:
    """The fitted count model: a Poisson booster and the 10% / 90% quantile boosters.

    Optionally a fourth, the activity booster (binary: will the month have a row?); the
    benchmark (``foretab bench units``) scores the first three on months with a row.
    """

    def __init__(self, boosters: tuple[object, ...], first_month: int) -> None:
        self._point, self._lo, self._hi = boosters[:3]
        self._active = boosters[3] if len(boosters) > 3 else None
        self.first_month = first_month

    @classmethod
    def fit(
        cls,
        units: np.ndarray,
        first_month: int,
        seed: int = 0,
        rounds: int | None = None,
        activity: bool = False,
    ) -> UnitsModel:
        """Fit on a ``[projects, months]`` panel of units (NaN: no row that month).

        ``rounds``: boosting rounds per booster (default ``ROUNDS``, the benchmarked model);
        ``activity``: also fit the activity booster (what the store's model does).
        """
        import lightgbm as lgb

        x, y = training_rows(units, first_month)
        tail = (1 - LEVEL) / 2
        rounds = rounds or ROUNDS

        def booster(x: np.ndarray, y: np.ndarray, objective: str, **extra: object) -> object:
            threads = {"num_threads": 1} if len(y) < SMALL_FIT_ROWS else {}
            params = {**PARAMS, **threads, "objective": objective, "seed": seed, **extra}
            data = lgb.Dataset(x, y, feature_name=list(FEATURES), free_raw_data=False)
            return lgb.train(params, data, num_boost_round=rounds)

        boosters = [
            booster(x, y, "poisson"),
            booster(x, y, "quantile", alpha=tail),
            booster(x, y, "quantile", alpha=1 - tail),
        ]
        if activity:
            boosters.append(booster(*activity_rows(units, first_month), "binary"))
        return cls(tuple(boosters), first_month)

    def predict(self, units: np.ndarray, horizon: int = MAX_HORIZON) -> UnitsForecast:
        """From each row's history (its last column = R), months R+1..R+``horizon``."""
        origin = units.shape[1] - 1
        value, lo, hi, active = (np.empty((units.shape[0], horizon)) for _ in range(4))
        for h in range(1, horizon + 1):
            x = features(units, origin, h, self.first_month)
            value[:, h - 1] = self._point.predict(x)  # type: ignore[attr-defined]
            lo[:, h - 1] = self._lo.predict(x)  # type: ignore[attr-defined]
            hi[:, h - 1] = self._hi.predict(x)  # type: ignore[attr-defined]
            if self._active is not None:
                active[:, h - 1] = self._active.predict(x)  # type: ignore[attr-defined]
        # Counts: never below 0, and the interval holds its point.
        value = np.maximum(value, 0.0)
        return UnitsForecast(
            value,
            np.clip(np.minimum(lo, value), 0.0, None),
            np.maximum(hi, value),
            np.clip(active, 0.0, 1.0) if self._active is not None else None,
        )

    @property
    def has_activity(self) -> bool:
        return self._active is not None

    def to_texts(self) -> tuple[str, ...]:
        """LightGBM's text models (data only): point, 10%, 90% (and activity)."""
        boosters = (self._point, self._lo, self._hi, self._active)
        return tuple(b.model_to_string() for b in boosters if b is not None)  # type: ignore[attr-defined]

    @classmethod
    def from_texts(cls, texts: tuple[str, ...], first_month: int) -> UnitsModel:
        import lightgbm as lgb

        boosters = tuple(lgb.Booster(model_str=t) for t in texts)
        return cls(boosters, first_month)  # type: ignore[arg-type]


def last_year_mean(units: np.ndarray, horizon: int = MAX_HORIZON) -> np.ndarray:
    """The baseline: each row's mean over its rows in the last 12 months, carried forward."""
    window = units[:, -WINDOW:]
    seen = np.isfinite(window)
    count = seen.sum(axis=1)
    total = np.where(seen, window, 0.0).sum(axis=1)
    mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    return np.repeat(mean[:, None], horizon, axis=1)
