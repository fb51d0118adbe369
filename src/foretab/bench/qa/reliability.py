"""Whether stated probabilities mean what they say, per kind (issue 30).

For each kind of stated probability (``foretab.analyze.calibration.ProbabilityKind``):
the answers' count, mean stated probability, share right, Spiegelhalter's z, the Brier
score and the expected calibration error (10 equal-width bins).

Spiegelhalter's z tests "the probabilities are exact": under that hypothesis
``Σ (y − p)(1 − 2p)`` has mean 0 and variance ``Σ (1 − 2p)² p (1 − p)``; |z| ≥ 1.96 rejects
it at 5%. It is the test the issue asks for because ECE alone is biased upwards: at
n ≈ 1,000 and 10 bins even exact probabilities show an ECE of about 0.03 by chance.

Rows are those of ``foretab bench run --details`` files: ``probability`` (stated),
``scenario_share`` (before calibration), ``probability_kind``, ``correct``.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from foretab.bench.bootstrap import LEVEL, RESAMPLES, percentile_interval, rounded_change
from foretab.errors import ForetabError

BINS = 10


@dataclass(frozen=True, slots=True)
class Reliability:
    """How well one set of stated probabilities matches the answers' outcomes."""

    n: int
    mean_stated: float
    share_right: float
    spiegelhalter_z: float
    brier: float
    ece: float
    #: per non-empty bin of stated probability: (answers, mean stated, share right)
    bins: tuple[tuple[int, float, float], ...] = ()

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            k: (round(v, 4) if isinstance(v, float) else v)
            for k, v in asdict(self).items()
            if k != "bins"
        }
        out["bins"] = [
            {"n": n, "stated": round(p, 4), "observed": round(o, 4)} for n, p, o in self.bins
        ]
        return out


def spiegelhalter_z(p: np.ndarray, y: np.ndarray) -> float:
    """Spiegelhalter's z of probabilities ``p`` against outcomes ``y`` (0 / 1)."""
    variance = float(np.sum((1 - 2 * p) ** 2 * p * (1 - p)))
    if variance <= 0:
        return 0.0 if np.allclose(p, y) else math.inf
    return float(np.sum((y - p) * (1 - 2 * p)) / math.sqrt(variance))


def binned(p: np.ndarray, y: np.ndarray, bins: int = BINS) -> list[tuple[int, float, float]]:
    """Per non-empty equal-width bin: (answers, mean stated, share right)."""
    index = np.minimum((p * bins).astype(int), bins - 1)
    out = []
    for k in np.unique(index):
        mask = index == k
        out.append((int(mask.sum()), float(p[mask].mean()), float(y[mask].mean())))
    return out


def ece(p: np.ndarray, y: np.ndarray, bins: int = BINS) -> float:
    """Expected calibration error: the answers-weighted |stated − share right| per bin."""
    return float(sum(n * abs(s - o) for n, s, o in binned(p, y, bins)) / p.size)


def reliability(p: Sequence[float], y: Sequence[bool]) -> Reliability:
    """The figures of one set of (stated probability, right) pairs (at least one)."""
    ps, ys = np.asarray(p, dtype=float), np.asarray(y, dtype=float)
    return Reliability(
        n=int(ps.size),
        mean_stated=float(ps.mean()),
        share_right=float(ys.mean()),
        spiegelhalter_z=spiegelhalter_z(ps, ys),
        brier=float(np.mean((ps - ys) ** 2)),
        ece=ece(ps, ys),
        bins=tuple(binned(ps, ys)),
    )


def by_kind(
    rows: Iterable[tuple[str, float, bool]],
) -> dict[str, dict[str, object]]:
    """``(kind, stated, right)`` rows → the figures per kind, and over all (``all``)."""
    grouped: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    for kind, p, right in rows:
        grouped[kind].append((p, right))
        grouped["all"].append((p, right))
    return {
        kind: reliability([p for p, _ in pairs], [r for _, r in pairs]).to_dict()
        for kind, pairs in sorted(grouped.items())
    }


# --- detail files ---------------------------------------------------------------------------


class DetailsError(ForetabError):
    """A details file cannot be read as ``foretab bench run --details`` rows."""


@dataclass(frozen=True, slots=True)
class Stated:
    """One answer's stated probability, from a details row."""

    id: str
    kind: str
    probability: float
    scenario_share: float
    correct: bool


def read_stated(path: Path) -> list[Stated]:
    """Every answer with a stated probability in a ``bench run --details`` file."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DetailsError(
            f"Cannot read {path} ({exc}); pass a file written by "
            "`foretab bench run --details FILE`."
        ) from exc
    out = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if row.get("probability") is None:
                continue
            share = row.get("scenario_share")
            out.append(
                Stated(
                    id=str(row["id"]),
                    kind=str(row.get("probability_kind") or "reasoning"),
                    probability=float(row["probability"]),
                    scenario_share=float(row["probability"] if share is None else share),
                    correct=bool(row["correct"]),
                )
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise DetailsError(
                f"{path}, line {number}: not a `foretab bench run --details` row ({exc})."
            ) from exc
    return out


@dataclass(frozen=True, slots=True)
class BrierComparison:
    """Run B's Brier score minus run A's on the answers both stated a probability for."""

    kind: str
    items: int
    brier: tuple[float, float]
    #: ``(difference, low, high)``: the paired-bootstrap interval of B − A (negative: B better)
    change: tuple[float, float, float]
    level: float


def compare_brier(
    a: Sequence[Stated], b: Sequence[Stated], level: float = LEVEL, resamples: int = RESAMPLES
) -> list[BrierComparison]:
    """Per kind (and ``all``), the paired Brier change of B against A on shared items."""
    in_b: Mapping[str, Stated] = {s.id: s for s in b}
    pairs = [(s, in_b[s.id]) for s in a if s.id in in_b]
    grouped: dict[str, list[tuple[Stated, Stated]]] = defaultdict(list)
    for pair in pairs:
        grouped[pair[0].kind].append(pair)
        grouped["all"].append(pair)
    out = []
    for kind, group in sorted(grouped.items()):
        if len(group) < 2:
            continue
        sa = np.array([(x.probability - x.correct) ** 2 for x, _ in group])
        sb = np.array([(y.probability - y.correct) ** 2 for _, y in group])
        bounds = percentile_interval(
            (sa, sb), lambda x, y, axis=-1: np.mean(y - x, axis=axis), level, resamples
        )
        out.append(
            BrierComparison(
                kind,
                len(group),
                (round(float(sa.mean()), 4), round(float(sb.mean()), 4)),
                rounded_change(float(sb.mean() - sa.mean()), bounds[0], 4),
                level,
            )
        )
    return out
