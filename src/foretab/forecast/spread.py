"""How wide one series' forecast errors run: locally adaptive (normalised) conformal.

Pooled residual quantiles give every series the same relative interval, but the corpus's
series differ sixfold in noise: sorted into fifths by the volatility of their own monthly
changes (2020–21), projects' mean |log(2022 price / Dec 2021 price)| runs from 0.05 in the
calmest fifth to 0.34 in the most volatile. One width for all then over-covers the calm
series and under-covers the volatile ones, and the probabilities of reasoning answers
inherit the error (a calm series' Q1 maximum looks far likelier to beat today's price
than it is).

So the calibration backtest divides each residual by the series' *scale*, ``base + slope ×
volatility + stale × √age``, fitted on the backtest's own |residuals|, and takes the per-horizon quantiles
of those normalised residuals; a forecast multiplies them back by its series' scale. This
is split conformal on normalised scores (Lei et al. 2018, "Distribution-free predictive
inference for regression", §5.2): marginal coverage is kept, and the width follows the
series.

*Volatility* is the root mean square of the series' log changes between consecutive
observations in the months a question reads (a change over a gap of g months divided by
√g, as a random walk spreads), shrunk towards the corpus's typical value with the weight
of ``PRIOR_CHANGES`` changes, so a series with two observed changes is not declared calm.
The scale also grows with the square root of the months since the series' last
observation (*staleness*): its forecast is anchored at a price the market has since moved
away from unseen.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from foretab.forecast.base import last_observed
from foretab.forecast.features import changes_since_previous

#: Shrinkage towards the corpus's typical volatility, in changes' worth of weight.
PRIOR_CHANGES = 1.0
#: A scale never falls below this share of the typical one: a series whose few observed
#: prices were equal is still uncertain.
MIN_SCALE_SHARE = 0.25
#: Months since the last observation beyond which a series is not staler (24 months
#: are read, and a question needs 6 of them).
MAX_STALE = 18
#: Whether the scale also grows with √(months since the last observation). Without it
#: the 2020-12 store's 80% intervals covered 87% of 2021 for series observed at R but
#: 66–71% for those last observed 4+ months before; with it 82–92% in every age group
#: (docs/benchmarks/selection.md, "Staleness in the error scale").
STALE_TERM = True


def change_moments(history: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``history [n, T]``: (sum of squared gap-normalised log changes, count).

    Callers pass the months a forecast reads (the model's lookback window).
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        logp = np.log(np.asarray(history, dtype=float))
    change, gap = changes_since_previous(logp)
    pair = np.isfinite(change)
    step = np.divide(change, np.sqrt(gap), out=np.zeros(change.shape), where=pair)
    return (step * step).sum(axis=1), pair.sum(axis=1).astype(float)


def own_volatility(history: np.ndarray) -> np.ndarray:
    """Unshrunk volatility per row (NaN with no consecutive pair of observations)."""
    total, count = change_moments(history)
    return np.sqrt(np.divide(total, count, out=np.full(total.shape, np.nan), where=count > 0))


def staleness(history: np.ndarray) -> np.ndarray:
    """``[n]``: √(months since the row's last observation), capped at ``MAX_STALE`` months.

    A forecast is anchored at the last observed price; the longer ago that was, the more
    the market has moved since unseen (as a random walk, the variance grows with it).
    """
    _, age = last_observed(np.asarray(history, dtype=float))
    return np.sqrt(np.minimum(np.nan_to_num(age.astype(float), nan=0.0), MAX_STALE))


@dataclass(frozen=True, slots=True)
class Spread:
    """A series' error scale: ``base + slope × volatility + stale × √age``.

    The volatility is shrunk towards ``typical``; ``age`` is the months since the last
    observation (``staleness``). A model file from before the staleness term has
    three numbers and ``stale`` 0.
    """

    typical: float
    base: float
    slope: float
    stale: float = 0.0

    def __post_init__(self) -> None:
        if not (self.typical > 0 and self.base >= 0 and self.slope >= 0 and self.stale >= 0):
            raise ValueError(
                f"a spread needs typical > 0 and base, slope, stale >= 0, got {self.as_list()}"
            )
        if self.base + self.slope * self.typical <= 0:
            raise ValueError("a spread must give the typical series a positive scale")

    def volatility(self, history: np.ndarray) -> np.ndarray:
        """Each row's volatility, shrunk towards ``typical``."""
        total, count = change_moments(history)
        prior = PRIOR_CHANGES * self.typical**2
        return np.sqrt((total + prior) / (count + PRIOR_CHANGES))

    def scale(self, history: np.ndarray) -> np.ndarray:
        """``[n]`` error scales of the rows of ``history`` (the typical series' is 1)."""
        typical = self.base + self.slope * self.typical
        raw = self.base + self.slope * self.volatility(history)
        if self.stale:
            raw = raw + self.stale * staleness(history)
        return np.maximum(raw / typical, MIN_SCALE_SHARE)

    def as_list(self) -> list[float]:
        values = [self.typical, self.base, self.slope]
        return [*values, self.stale] if self.stale else values

    @classmethod
    def from_list(cls, values: list[float]) -> Spread:
        if len(values) not in (3, 4) or not all(np.isfinite(values)):
            raise ValueError(f"a spread is three or four finite numbers, got {values!r}")
        return cls(*(float(v) for v in values))


def fit_spread(
    histories: list[np.ndarray], residuals: list[np.ndarray], stale: bool = STALE_TERM
) -> Spread:
    """The scale that best predicts |residual| from volatility (and staleness): NNLS.

    ``histories[i]`` are the windows a backtest forecast read and ``residuals[i]`` their
    log residuals ``[rows, horizons]`` (NaN where unobserved); every horizon counts.
    Non-negative least squares on ``[1, volatility]`` (plus ``√age`` with ``stale``):
    a negative slope gives every series the mean, a negative base a scale through 0.
    """
    own = np.concatenate([own_volatility(h) for h in histories])
    typical = float(np.nanmedian(own)) if np.isfinite(own).any() else 0.0
    typical = typical if typical > 0 else 1e-3
    provisional = Spread(typical, 0.0, 1.0)
    vol = np.concatenate([provisional.volatility(h) for h in histories])
    size = np.concatenate([_row_mean_abs(r) for r in residuals])
    ok = np.isfinite(vol) & np.isfinite(size)
    if ok.sum() < 10:
        return Spread(typical, typical, 0.0)  # too little to fit: every series alike
    columns = [np.ones(int(ok.sum())), vol[ok]]
    if stale:
        columns.append(np.concatenate([staleness(h) for h in histories])[ok])
    from scipy.optimize import nnls  # scikit-learn's dependency; loaded only to fit

    coef, _ = nnls(np.column_stack(columns), size[ok])
    base, slope = float(coef[0]), float(coef[1])
    if base + slope * typical <= 0:  # only a staleness relation: keep a typical scale
        return Spread(typical, float(np.mean(size[ok])), 0.0)
    return Spread(typical, base, slope, float(coef[2]) if stale else 0.0)


def _row_mean_abs(errors: np.ndarray) -> np.ndarray:
    """Mean |error| per row over its finite entries (NaN for a row with none)."""
    finite = np.isfinite(errors)
    total = np.where(finite, np.abs(errors), 0.0).sum(axis=1)
    count = finite.sum(axis=1)
    return np.divide(total, count, out=np.full(total.shape, np.nan), where=count > 0)
