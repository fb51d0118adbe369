"""A synthetic but realistic corpus of monthly new-home prices, in the ingest format.

Calibrated on the real corpus (``../shared/data/realestate``): project levels spread about
±25 % around their district, districts about ±35 % around their city; month-to-month noise
of a few percent with occasional level shifts (a new phase, a different product mix);
about a quarter of the projects already selling in the first month and the rest launching
later; some selling out before the end; about one month in four without sales (absent
rows); sales volumes that peak at launch and fade; a handful of implausible prices.
On top: city trends with a market-wide downturn and a one-month shock in which most
projects report no sales.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from foretab.core.months import Month, month_range
from foretab.demo.defaults import DEFAULT_MONTHS, DEFAULT_PROJECTS, DEFAULT_START
from foretab.demo.geography import CITIES, CityProfile, DistrictProfile
from foretab.demo.names import project_names
from foretab.errors import ForetabError

COLUMNS = (
    "city",
    "district",
    "project",
    "month",
    "avg_price",
    "units_sold",
    "city_zh",
    "district_zh",
    "project_zh",
)
MIN_PROJECTS_PER_DISTRICT = 3


class DemoError(ForetabError):
    """Bad parameters for the demo corpus."""


@dataclass(frozen=True, slots=True)
class MarketPhases:
    """When the market turns: a one-month shock, then a downturn and a slow recovery."""

    shock: int
    downturn_start: int
    downturn_end: int


def market_phases(rng: np.random.Generator, months: int) -> MarketPhases:
    """When this corpus's market shocks, turns down and recovers (months from the start)."""
    shock = min(months - 1, max(1, round(months * 0.12) + int(rng.integers(-1, 2))))
    start = min(months - 1, max(2, round(months * 0.45) + int(rng.integers(-2, 3))))
    end = min(months - 1, start + max(1, round(months * 0.25) + int(rng.integers(-2, 3))))
    return MarketPhases(shock=shock, downturn_start=start, downturn_end=end)


def city_log_index(rng: np.random.Generator, months: int, phases: MarketPhases) -> np.ndarray:
    """Log price index of a city: rise, downturn, gentle recovery, shock dip, small wiggle."""
    rise = rng.uniform(0.002, 0.008)
    fall = rng.uniform(-0.013, -0.004)
    recover = rng.uniform(-0.001, 0.004)
    t = np.arange(months)
    slope = np.where(
        t < phases.downturn_start, rise, np.where(t < phases.downturn_end, fall, recover)
    )
    level = np.concatenate([[0.0], np.cumsum(slope[1:])])
    level += np.cumsum(rng.normal(0.0, 0.004, months))
    level[phases.shock] -= rng.uniform(0.01, 0.04)
    return level


def _allocate(rng: np.random.Generator, n_projects: int, n_districts: int) -> np.ndarray:
    """Projects per district: uneven like the real corpus, at least a few everywhere."""
    spare = n_projects - MIN_PROJECTS_PER_DISTRICT * n_districts
    weights = rng.dirichlet(np.full(n_districts, 2.0))
    extra = np.floor(weights * spare).astype(int)
    for i in rng.choice(n_districts, spare - int(extra.sum()), replace=False):
        extra[i] += 1
    return extra + MIN_PROJECTS_PER_DISTRICT


def _activity(
    rng: np.random.Generator, months: int, phases: MarketPhases
) -> tuple[int, np.ndarray]:
    """(launch month, mask of months with sales) of one project."""
    launch = 0 if rng.random() < 0.28 else int(rng.integers(1, months))
    if rng.random() < 0.5:
        end = months - 1
    else:
        duration = max(1, round(float(rng.lognormal(np.log(14.0), 0.7))))
        end = min(months - 1, launch + duration - 1)
    density = float(np.clip(rng.beta(4.0, 1.2), 0.35, 1.0))
    probability = np.full(months, density)
    probability[phases.downturn_start : phases.downturn_end] *= 0.85
    probability[phases.shock] *= 0.45
    active = rng.random(months) < probability
    active[:launch] = False
    active[end + 1 :] = False
    # A launch is its first sale and a sell-out its last; a project already selling when
    # the corpus starts, or still selling when it ends, has no such anchor.
    if launch > 0:
        active[launch] = True
    if end < months - 1 or not active.any():
        active[end] = True
    return launch, active


def _project_series(
    rng: np.random.Generator,
    base_log_price: float,
    district_trend: np.ndarray,
    launch: int,
    months: int,
) -> np.ndarray:
    """Log prices of one project for every month (masked later)."""
    offset = float(np.clip(rng.normal(0.0, 0.22), -0.6, 0.6))
    drift = rng.normal(0.0, 0.002) * (np.arange(months) - launch)
    noise = np.zeros(months)
    shocks = rng.normal(0.0, 0.02, months)
    for t in range(1, months):
        noise[t] = 0.6 * noise[t - 1] + shocks[t]
    if rng.random() < 0.12:  # a new phase or a different product mix shifts the level
        noise[int(rng.integers(launch, months)) :] += rng.normal(0.0, 0.15)
    return base_log_price + district_trend + offset + drift + noise


def _units_sold(
    rng: np.random.Generator, launch: int, months: int, phases: MarketPhases
) -> np.ndarray:
    age = np.maximum(np.arange(months) - launch, 0)
    base = rng.lognormal(np.log(20.0), 0.6)
    volume = base * (1.0 + 1.2 * np.exp(-age / 2.0)) * np.exp(-age / 20.0)
    volume[phases.downturn_start : phases.downturn_end] *= 0.6
    volume *= rng.lognormal(0.0, 0.7, months)
    return np.maximum(1, np.round(volume)).astype(np.int64)


def simulate_project(
    rng: np.random.Generator,
    district_log_price: float,
    district_trend: np.ndarray,
    phases: MarketPhases,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One project over every month: (mask of months with sales, log prices, units sold).

    The demo corpus and the scale corpus (``foretab.demo.scale``) share it, so both have
    the calibrated shape described at the top of this module.
    """
    months = len(district_trend)
    launch, active = _activity(rng, months, phases)
    log_price = _project_series(rng, district_log_price, district_trend, launch, months)
    units = _units_sold(rng, launch, months, phases)
    return active, log_price, units


def add_outliers(rng: np.random.Generator, prices: np.ndarray) -> None:
    """A few implausible prices, like the real corpus's 7.11 yuan/m² (data-entry slips)."""
    count = max(3, len(prices) // 800)
    factors = np.array([0.001, 0.1, 0.3, 4.0, 9.0])
    rows = rng.choice(len(prices), count, replace=False)
    prices[rows] *= factors[rng.integers(len(factors), size=count)]


def _check(months: int, n_projects: int, n_districts: int) -> None:
    if months < 2:
        raise DemoError(f"months must be at least 2, got {months}; use the default 48.")
    least = MIN_PROJECTS_PER_DISTRICT * n_districts
    if n_projects < least:
        raise DemoError(
            f"n_projects must be at least {least} ({MIN_PROJECTS_PER_DISTRICT} per district "
            f"in {n_districts} districts), got {n_projects}; use the default "
            f"{DEFAULT_PROJECTS}."
        )


def generate_corpus(
    seed: int = 0,
    *,
    start: Month = DEFAULT_START,
    months: int = DEFAULT_MONTHS,
    n_projects: int = DEFAULT_PROJECTS,
) -> pd.DataFrame:
    """The demo corpus: one row per project-month with sales, sorted.

    Columns: ``city, district, project, month`` (``YYYY-MM``), ``avg_price`` (yuan/m²),
    ``units_sold`` and the Chinese originals ``city_zh, district_zh, project_zh``.
    The same ``seed`` gives the identical frame.
    """
    districts: list[tuple[CityProfile, DistrictProfile]] = [
        (city, district) for city in CITIES for district in city.districts
    ]
    _check(months, n_projects, len(districts))
    rng = np.random.default_rng(seed)
    phases = market_phases(rng, months)
    month_labels = np.array([m.iso for m in month_range(start, start + (months - 1))])
    city_index = {city.name: city_log_index(rng, months, phases) for city in CITIES}
    counts = _allocate(rng, n_projects, len(districts))

    frames: list[pd.DataFrame] = []
    for (city, district), count in zip(districts, counts, strict=True):
        names = project_names(rng, int(count), taken=set())
        district_log = np.log(city.base_price * district.price_factor) + rng.normal(0, 0.05)
        district_trend = city_index[city.name] + rng.normal(0.0, 0.0015) * np.arange(months)
        for name in names:
            active, log_price, units = simulate_project(rng, district_log, district_trend, phases)
            frames.append(
                pd.DataFrame(
                    {
                        "city": city.name,
                        "district": district.name,
                        "project": name.name,
                        "month": month_labels[active],
                        "avg_price": np.exp(log_price[active]),
                        "units_sold": units[active],
                        "city_zh": city.name_zh,
                        "district_zh": district.name_zh,
                        "project_zh": name.name_zh,
                    }
                )
            )
    corpus = pd.concat(frames, ignore_index=True)
    prices = corpus["avg_price"].to_numpy(copy=True)
    add_outliers(rng, prices)
    corpus["avg_price"] = np.round(prices, 2)
    corpus = corpus.sort_values(["city", "district", "project", "month"], ignore_index=True)
    return corpus.loc[:, list(COLUMNS)]
