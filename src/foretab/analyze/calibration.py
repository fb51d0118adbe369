"""Calibrated probabilities: the share of scenarios mapped to the chance of being right.

The share of scenarios giving an answer (``foretab.analyze.probability``,
``foretab.analyze.scope_odds``) is a probability under the forecast distribution, and
that distribution is not exact: on the QA val split reasoning answers stated 0.62 and
were right 0.565 of the time (issue 30). A monotone map per *kind* of probability, fitted
on the QA train split's answers (``foretab bench calibrate``), turns the scenario share
into the probability the answer states. The map is monotone, so it never changes which
answer is chosen (the decision rules read the scenario shares): only what is said about it.

Kinds differ in how far off the scenarios are (a scope pick among hundreds of candidates
is not a yes/no threshold), so each has its own map; a kind with too few training
answers keeps the identity.

The map is data (JSON: breakpoints of a piecewise-linear curve), saved with the store
next to its model and tied to that model by the model file's SHA-256: a store from
someone else runs no code when opened, and a map fitted for another model is not used.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from foretab.core.plan import Plan
from foretab.errors import ForecastError

#: Where the map is saved with the store (next to ``store_model.zip``).
ARTIFACT_NAME = "probability_calibration.json"
FORMAT = "foretab-probability-calibration"
FORMAT_VERSION = 1
#: A calibrated probability is never stated as certain: the map's ends are clipped here.
FLOOR, CEILING = 0.005, 0.995


class ProbabilityKind(StrEnum):
    """What a stated probability is the probability of (one map per kind)."""

    REASONING = "reasoning"  # named projects: rise / fall, which rises most, highest
    THRESHOLD = "threshold"  # one project above / below a value
    WHICH_MONTH = "which-month"  # the month a project peaks or bottoms in
    SCOPE = "scope"  # a district's or city's pick, top N or range
    PLACE = "place"  # districts or cities as wholes: rise / fall, which rises most, above


def kind_of(plan: Plan) -> ProbabilityKind:
    """The kind of the probability an answer to ``plan`` states."""
    if plan.place is not None:
        return ProbabilityKind.PLACE
    if plan.scopes:
        return ProbabilityKind.SCOPE
    if plan.which_month is not None:
        return ProbabilityKind.WHICH_MONTH
    if plan.threshold is not None:
        return ProbabilityKind.THRESHOLD
    return ProbabilityKind.REASONING


@dataclass(frozen=True, slots=True)
class Curve:
    """A monotone piecewise-linear map ``[0, 1] → [FLOOR, CEILING]`` through ``(x, y)``."""

    x: tuple[float, ...]
    y: tuple[float, ...]
    #: how it was fitted (``isotonic``, ``platt``), and on how many answers
    method: str
    n: int

    def __call__(self, p: float | np.ndarray) -> np.ndarray:
        mapped = np.interp(np.asarray(p, dtype=float), self.x, self.y)
        return np.clip(mapped, FLOOR, CEILING)


class _CurveDoc(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    method: str = Field(max_length=40)
    n: int = Field(ge=0)
    x: list[float] = Field(min_length=2, max_length=10_000)
    y: list[float] = Field(min_length=2, max_length=10_000)

    @field_validator("x", "y")
    @classmethod
    def _unit_and_sorted(cls, values: list[float]) -> list[float]:
        if not all(math.isfinite(v) and 0.0 <= v <= 1.0 for v in values):
            raise ValueError("every breakpoint must be a finite number in [0, 1]")
        if any(b < a for a, b in itertools.pairwise(values)):
            raise ValueError("breakpoints must not decrease (the map is monotone)")
        return values


class _FileDoc(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    format: str
    format_version: int
    #: SHA-256 of the store model file the answers were given with
    model_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    fitted_on: str = Field(max_length=200)
    kinds: dict[ProbabilityKind, _CurveDoc]


@dataclass(frozen=True, slots=True)
class ProbabilityCalibration:
    """One ``Curve`` per kind (a kind without one is stated as its scenario share)."""

    curves: Mapping[ProbabilityKind, Curve]
    model_sha256: str
    #: what the curves were fitted on, in words (the QA split's file name)
    fitted_on: str = ""
    described: str = field(default="", compare=False)

    def stated(self, kind: ProbabilityKind, p: float | np.ndarray) -> np.ndarray:
        curve = self.curves.get(kind)
        return np.asarray(p, dtype=float) if curve is None else curve(p)

    def to_json(self) -> bytes:
        doc = _FileDoc(
            format=FORMAT,
            format_version=FORMAT_VERSION,
            model_sha256=self.model_sha256,
            fitted_on=self.fitted_on,
            kinds={
                kind: _CurveDoc(method=c.method, n=c.n, x=list(c.x), y=list(c.y))
                for kind, c in self.curves.items()
            },
        )
        return doc.model_dump_json(indent=1).encode()

    @classmethod
    def from_json(cls, data: bytes) -> ProbabilityCalibration:
        """Read a calibration file; anything but a valid one raises ``ForecastError``."""
        try:
            doc = _FileDoc.model_validate_json(data)
        except (ValidationError, ValueError) as exc:
            raise _invalid(str(exc).splitlines()[0]) from exc
        if doc.format != FORMAT or doc.format_version != FORMAT_VERSION:
            raise _invalid(f"format {doc.format!r} version {doc.format_version}")
        curves = {}
        for kind, c in doc.kinds.items():
            if len(c.x) != len(c.y):
                raise _invalid(f"{kind.value}: {len(c.x)} x breakpoints but {len(c.y)} y")
            curves[kind] = Curve(tuple(c.x), tuple(c.y), c.method, c.n)
        return cls(curves, doc.model_sha256, doc.fitted_on, describe(curves))


def _invalid(why: str) -> ForecastError:
    return ForecastError(
        f"the store's probability calibration file is invalid ({why})",
        suggestions=("refit it with `foretab bench calibrate --db DB --details FILE`",),
    )


def describe(curves: Mapping[ProbabilityKind, Curve]) -> str:
    """The maps in words, for the trace."""
    return ", ".join(f"{k.value} {c.method} (n {c.n:,})" for k, c in sorted(curves.items()))


def model_digest(model_file: bytes) -> str:
    """The SHA-256 a calibration is tied to: answers are the model's."""
    return hashlib.sha256(model_file).hexdigest()


# --- the calibration in force while an analyzer runs --------------------------------------

_CALIBRATION: ContextVar[ProbabilityCalibration | None] = ContextVar("calibration", default=None)


@contextmanager
def calibrated_by(calibration: ProbabilityCalibration | None) -> Iterator[None]:
    """State probabilities through ``calibration`` (None: the scenario shares) in the block."""
    token = _CALIBRATION.set(calibration)
    try:
        yield
    finally:
        _CALIBRATION.reset(token)


def stated(plan: Plan, p: float) -> float:
    """The probability an answer to ``plan`` states for scenario share ``p``."""
    calibration = _CALIBRATION.get()
    if calibration is None:
        return float(p)
    return float(calibration.stated(kind_of(plan), p))


def how_stated(plan: Plan) -> str:
    """The trace's words on how the stated probability relates to the scenario share."""
    calibration = _CALIBRATION.get()
    kind = kind_of(plan)
    curve = None if calibration is None else calibration.curves.get(kind)
    if curve is None:
        return "stated as the scenario share (no calibration for this kind)"
    where = f" on {calibration.fitted_on}" if calibration and calibration.fitted_on else ""
    return (
        f"stated through the {kind.value} {curve.method} calibration fitted{where} (n {curve.n:,})"
    )


# --- saved with a store ---------------------------------------------------------------------


class ArtifactStore(Protocol):
    """What a calibration is read from and saved to (a history store)."""

    def load_artifact(self, name: str) -> bytes | None: ...

    def save_artifact(self, name: str, data: bytes) -> None: ...


def load_calibration(store: ArtifactStore, model_artifact: str) -> ProbabilityCalibration | None:
    """The store's calibration, if it has one fitted for the model it holds now.

    A calibration of another model (the store was retrained since) is not used: its maps
    were fitted on that model's answers.
    """
    data = store.load_artifact(ARTIFACT_NAME)
    if data is None:
        return None
    calibration = ProbabilityCalibration.from_json(data)
    model = store.load_artifact(model_artifact)
    if model is None or model_digest(model) != calibration.model_sha256:
        return None
    return calibration
