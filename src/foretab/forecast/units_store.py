"""The store's units model: the count model of ``forecast.units`` fitted at R, saved with it.

``foretab train`` fits it beside the price model, on the history store's units sold (a
month without a row: no sales recorded; a row with 0 units: 0 sold), and saves it as
``units_model.zip``: a JSON manifest and LightGBM's four text models (the three of
``foretab bench units`` and the activity booster: will a month have a row at all), data
only as the price model (docs/design.md §1). A store trained before it existed has no such file:
future units questions are then refused, naming ``foretab train --db DB``.
"""

from __future__ import annotations

import io
import time
import zipfile
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from foretab.core.months import Month, month_range
from foretab.core.plan import EntityRef
from foretab.corpus.schema import STORE_VALUE_COLUMN
from foretab.errors import ForecastError
from foretab.forecast.persist import MAX_MEMBER_BYTES
from foretab.forecast.units import LEVEL, ROUNDS, WINDOW, UnitsForecast, UnitsModel
from foretab.forecast.windows import MAX_FIT_SERIES, sample_series

if TYPE_CHECKING:
    import pandas as pd

    from foretab.store import HistoryStore

UNITS_ARTIFACT = "units_model.zip"
UNITS_MODEL_NAME = "units_poisson"
_MANIFEST = "manifest.json"
#: the Poisson point, the 10% and 90% quantiles (a month with a row), the activity booster
_BOOSTERS = ("point.txt", "lo.txt", "hi.txt", "active.txt")
_MONTH = r"^\d{4}-\d{2}$"
_TRAIN_FIX = "foretab train --db DB"


class UnitsManifest(BaseModel):
    """``manifest.json`` of the units model file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: Literal["foretab-units-model"]
    format_version: Literal[1]
    model: Literal["units_poisson"]
    reference_month: str = Field(pattern=_MONTH)
    #: the training panel's first month: the calendar feature counts from it
    first_month: str = Field(pattern=_MONTH)
    trained_seconds: float = Field(ge=0)
    seed: int
    n_series: int = Field(ge=0)
    rounds: int = Field(ge=1)
    level: float = Field(gt=0, lt=1)


@dataclass(frozen=True, slots=True)
class UnitsStoreModel:
    """A fitted units model and what it was fitted on."""

    model: UnitsModel
    reference_month: Month
    first_month: Month
    trained_seconds: float = 0.0
    seed: int = 0
    n_series: int = 0
    rounds: int = ROUNDS
    level: float = LEVEL
    name: str = UNITS_MODEL_NAME

    @property
    def lookback(self) -> int:
        """Months of history a forecast reads (the features' window)."""
        return WINDOW

    def predict(self, history: np.ndarray, h: int) -> UnitsForecast:
        """``history``: ``[n, WINDOW]`` units to R (NaN: no row); months R+1..R+h."""
        width = self.reference_month.minus(self.first_month) + 1
        n, t = history.shape
        if t < width:  # laid out as the training panel: the calendar feature counts from it
            history = np.concatenate([np.full((n, width - t), np.nan), history], axis=1)
        return self.model.predict(history, h)

    def to_bytes(self) -> bytes:
        manifest = UnitsManifest(
            format="foretab-units-model",
            format_version=1,
            model=UNITS_MODEL_NAME,
            reference_month=self.reference_month.iso,
            first_month=self.first_month.iso,
            trained_seconds=round(self.trained_seconds, 3),
            seed=self.seed,
            n_series=self.n_series,
            rounds=self.rounds,
            level=self.level,
        )
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
            zf.writestr(_MANIFEST, manifest.model_dump_json(indent=1))
            for member, text in zip(_BOOSTERS, self.model.to_texts(), strict=True):
                zf.writestr(member, text)
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> UnitsStoreModel:
        """Read a units model file; anything but a valid one raises ``ForecastError``."""
        import lightgbm as lgb

        why = "the store's units model file is invalid"
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                manifest = UnitsManifest.model_validate_json(_member(zf, _MANIFEST))
                texts = tuple(_member(zf, name).decode("utf-8") for name in _BOOSTERS)
            first = Month.parse(manifest.first_month)
            model = UnitsModel.from_texts(texts, first.month)  # type: ignore[arg-type]
        except (
            zipfile.BadZipFile,
            ValidationError,
            UnicodeDecodeError,
            KeyError,
            OSError,
            ValueError,
            EOFError,
            lgb.basic.LightGBMError,
        ) as exc:
            first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise ForecastError(
                f"{why}: {first_line}",
                suggestions=(f"run `{_TRAIN_FIX}` to fit and save a new one",),
            ) from exc
        return cls(
            model,
            Month.parse(manifest.reference_month),
            first,
            manifest.trained_seconds,
            manifest.seed,
            manifest.n_series,
            manifest.rounds,
            manifest.level,
        )


def _member(zf: zipfile.ZipFile, name: str) -> bytes:
    info = zf.getinfo(name)  # KeyError when absent
    if info.file_size > MAX_MEMBER_BYTES:
        raise ValueError(f"member {name!r} is {info.file_size} bytes, more than a model holds")
    return zf.read(info)


def units_panel(
    frame: pd.DataFrame, last: Month
) -> tuple[tuple[EntityRef, ...], Month, np.ndarray]:
    """``open_history(db).panel(summed=True)`` rows as ``[project, month]`` units up to ``last``.

    Unlike prices, 0 is a value (a month with a row and no sale); NaN: no row.
    """
    from foretab.forecast.store import entity_rows, month_offsets

    parsed, which = month_offsets(frame["month"])
    is_past = np.array([m <= last for m in parsed.values()], dtype=bool)[which]
    sub = frame.loc[is_past & frame[STORE_VALUE_COLUMN].notna().to_numpy()]
    if sub.empty:
        raise ForecastError("the history store has no units sold to learn from")
    parsed, which = month_offsets(sub["month"])
    first = min(parsed.values())
    months = list(month_range(first, last))
    refs, rows = entity_rows(sub)
    cols = np.array([m.minus(first) for m in parsed.values()], dtype=int)[which]
    values = np.full((len(refs), len(months)), np.nan)
    values[rows, cols] = sub[STORE_VALUE_COLUMN].to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        values[~(values >= 0)] = np.nan  # a negative count is not one
    return refs, first, values


def fit_units_store_model(
    frame: pd.DataFrame, reference_month: Month, seed: int = 0, rounds: int | None = None
) -> UnitsStoreModel:
    """Fit the count model on the units of ``frame`` up to ``reference_month``.

    ``rounds``: the boosting rounds of each of the three boosters (the benchmarked model
    uses ``ROUNDS``, the default; fewer only where a test says why).
    """
    from foretab.forecast import units

    rounds = rounds or units.ROUNDS
    refs, first, values = units_panel(frame, reference_month)
    # Past the cap a seeded sample of series, before any training row is built: the
    # rows (24 origins x 12 horizons per series) are most of the fit's memory.
    picked = sample_series(len(refs), MAX_FIT_SERIES, seed)
    if picked is not None:
        values = values[picked]
    start = time.perf_counter()
    model = UnitsModel.fit(values, first.month, seed, rounds=rounds, activity=True)
    return UnitsStoreModel(
        model,
        reference_month,
        first,
        time.perf_counter() - start,
        seed,
        len(refs),
        rounds,
        LEVEL,
    )


def train_units_model(store: HistoryStore, reference_month: Month, seed: int = 0) -> bool:
    """Fit and save the units model with ``store``; False when its corpus has no units."""
    if store.schema.columns.summed is None:
        return False
    fitted = fit_units_store_model(store.panel(summed=True), reference_month, seed)
    store.save_artifact(UNITS_ARTIFACT, fitted.to_bytes())
    return True


def load_units_model(store: HistoryStore) -> UnitsStoreModel:
    """The units model saved with ``store``; a store trained before it existed is refused."""
    from foretab.forecast.lightgbm_import import import_for_prediction
    from foretab.forecast.store import store_reference

    import_for_prediction()
    data = store.load_artifact(UNITS_ARTIFACT)
    if data is None:
        raise ForecastError(
            "no units model is stored with this store (it was trained before foretab "
            "forecast units sold), so future units sold cannot be answered",
            suggestions=(f"run `{_TRAIN_FIX}` to fit and save one",),
        )
    fitted = UnitsStoreModel.from_bytes(data)
    ref = store_reference(store)
    if fitted.reference_month != ref:
        raise ForecastError(
            f"the store's units model was trained at {fitted.reference_month.iso}, but the "
            f"store's reference month is {ref.iso}",
            suggestions=(f"run `{_TRAIN_FIX}` to refit it",),
        )
    return fitted
