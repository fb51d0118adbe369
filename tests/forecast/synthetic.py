"""Tiny synthetic panels: trending prices at different scales with random gaps."""

from __future__ import annotations

import numpy as np


def make_panel(n: int = 60, t: int = 30, seed: int = 0, missing: float = 0.3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    scale = rng.uniform(8_000, 90_000, n)[:, None]
    trend = rng.normal(-0.004, 0.004, n)[:, None] * np.arange(t)[None, :]
    noise = rng.normal(0, 0.02, (n, t))
    panel = scale * np.exp(trend + noise)
    panel[rng.random((n, t)) < missing] = np.nan
    panel[np.isnan(panel).all(axis=1), -1] = scale[np.isnan(panel).all(axis=1), 0]
    return panel
