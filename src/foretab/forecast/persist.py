"""Data-only model files: a zip of a JSON manifest and LightGBM's own text models.

Opening a store from someone else must run no code from it (docs/design.md §1), so nothing here
unpickles: the manifest is validated by a pydantic model with ``extra="forbid"``, numeric
state (residual quantiles, drift) is plain JSON, and boosters are parsed by LightGBM from
its text format. Any other content is an invalid model file.
"""

from __future__ import annotations

import io
import zipfile
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from foretab.errors import ForecastError
from foretab.forecast.base import MAX_HORIZON, Forecaster
from foretab.forecast.registry import NEURAL

if TYPE_CHECKING:
    from foretab.forecast.market import Market

FORMAT = "foretab-store-model"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
#: A fitted default model is a few MB; anything far larger is not one of ours.
MAX_MEMBER_BYTES = 256 * 1024 * 1024
#: Models whose fitted state has a data-only encoding below. The torch models
#: (timesnet, timexer, nhits, patchtst, tide) have none yet, so they cannot be a store's model.
PERSISTABLE = ("naive", "drift", "autoets", "autotheta", "lgbm", "lgbm_nocal", "lgbm_market")
#: The LightGBM models (boosters + residual grid, and market signals when they read them).
_LGBM = ("lgbm", "lgbm_nocal", "lgbm_market")
_MONTH = r"^\d{4}-\d{2}$"

HyperValue = bool | int | float | str


class Manifest(BaseModel):
    """``manifest.json``: what the model is, when it was fitted, and its numeric state."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: Literal["foretab-store-model"]
    format_version: Literal[1]
    model: str
    reference_month: str = Field(pattern=_MONTH)
    #: the training panel's first month: LightGBM's calendar feature counts from it
    first_month: str = Field(pattern=_MONTH)
    lookback: int = Field(ge=1, le=1200)
    trained_seconds: float = Field(ge=0)
    seed: int
    n_series: int = Field(ge=0)
    #: where ``residual_quantiles`` come from: a rolling backtest (calibrated; per series:
    #: normalised by each series' error scale, ``residual_spread``), a
    #: validation split, or the training windows themselves (too narrow)
    interval_method: Literal["backtest", "backtest-per-series", "validation", "in-sample"] = (
        "in-sample"
    )
    hyper_parameters: dict[str, HyperValue] = Field(default_factory=dict)
    #: per-horizon quantiles (101-point grid) of log residuals: ``[12][101]``
    residual_quantiles: list[list[float]] | None = None
    #: the error scale of normalised residuals, ``[typical, base, slope(, stale)]``
    #: (``foretab.forecast.spread``); absent: the quantiles are pooled log residuals
    residual_spread: list[float] | None = None
    #: per-month log location of the forecast distribution (``calibrate.recent_drift``);
    #: the quantiles above are then centred on 0
    interval_drift: float = Field(default=0.0, ge=-1.0, le=1.0)
    #: per-horizon drift of the drift model: ``[12]``
    drift: list[float] | None = None
    #: archive members holding LightGBM text models, one per ensemble member
    boosters: list[str] = Field(default_factory=list)
    #: market signals (``foretab.forecast.market``): group keys, and per group and month
    #: the median log change and log level (``null`` = too few observations)
    market_keys: list[str] | None = None
    market_change: list[list[float | None]] | None = None
    market_level: list[list[float | None]] | None = None


class InvalidModelFile(ForecastError):
    """The stored model file is missing, corrupt, foreign or of another format."""


def write_archive(manifest: Manifest, boosters: list[str]) -> bytes:
    """The zip bytes of ``manifest`` and its booster texts (in ``manifest.boosters`` order)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        zf.writestr(MANIFEST, manifest.model_dump_json(indent=1))
        for member, text in zip(manifest.boosters, boosters, strict=True):
            zf.writestr(member, text)
    return buf.getvalue()


def read_archive(data: bytes, why: str) -> tuple[Manifest, list[str]]:
    """Parse and validate an archive; ``why`` is prefixed to error messages."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            manifest = Manifest.model_validate_json(_member(zf, MANIFEST))
            boosters = [_member(zf, name).decode("utf-8") for name in manifest.boosters]
    except (zipfile.BadZipFile, ValidationError, UnicodeDecodeError, KeyError, OSError) as exc:
        raise InvalidModelFile(f"{why}: {_short(exc)}") from exc
    except (ValueError, EOFError) as exc:  # truncated or corrupt deflate streams
        raise InvalidModelFile(f"{why}: {_short(exc)}") from exc
    return manifest, boosters


def _member(zf: zipfile.ZipFile, name: str) -> bytes:
    info = zf.getinfo(name)  # KeyError when absent
    if info.file_size > MAX_MEMBER_BYTES:
        raise ValueError(f"member {name!r} is {info.file_size} bytes, more than a model holds")
    return zf.read(info)


def _short(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def require_persistable(name: str) -> None:
    """Refuse, before any fitting, a model that cannot be saved as data only."""
    if name in PERSISTABLE:
        return
    why = (
        "its fitted weights have no data-only file format in foretab (store models are "
        "never pickled)"
        if name in NEURAL
        else "it is not a forecaster foretab knows"
    )
    raise ForecastError(
        f"model {name!r} cannot be a store model: {why}",
        suggestions=tuple(f"--model {n}" for n in PERSISTABLE),
    )


def forecaster_state(name: str, forecaster: Forecaster) -> tuple[dict[str, object], list[str]]:
    """Manifest fields and booster texts for a fitted ``forecaster`` registered as ``name``."""
    require_persistable(name)
    if name in _LGBM:
        from foretab.forecast.gbm import LightGBMForecaster

        assert isinstance(forecaster, LightGBMForecaster)
        # The calendar-free member (if any) is the last booster.
        members = [*forecaster.boosters, *forecaster.free_boosters]
        texts = [b.model_to_string() for b in members]
        hyper: dict[str, HyperValue] = {
            "lookback": forecaster.lookback,
            "calendar": forecaster.calendar,
            "num_threads": int(forecaster.params["num_threads"]),
            "market": forecaster.uses_places,
        }
        if forecaster.free_boosters:
            hyper["calendar_free_members"] = len(forecaster.free_boosters)
            hyper["calendar_free_weight"] = forecaster.calendar_free_weight
        fields: dict[str, object] = {
            "hyper_parameters": hyper,
            "residual_quantiles": forecaster.residual_quantiles.tolist(),
            "boosters": [f"booster_{k}.txt" for k in range(len(texts))],
        }
        if forecaster.spread is not None:
            fields["residual_spread"] = forecaster.spread.as_list()
        if forecaster.location_drift:
            fields["interval_drift"] = forecaster.location_drift
        if forecaster.market is not None:
            fields["market_keys"] = list(forecaster.market.keys)
            fields["market_change"] = _nullable(forecaster.market.change)
            fields["market_level"] = _nullable(forecaster.market.level)
        return fields, texts
    if name == "drift":
        from foretab.forecast.baselines import DriftForecaster

        assert isinstance(forecaster, DriftForecaster)
        return {
            "hyper_parameters": {"lookback": forecaster.lookback},
            "drift": forecaster.drift.tolist(),
        }, []
    return {}, []  # naive, autoets, autotheta: no fitted state


def restore_forecaster(manifest: Manifest, boosters: list[str], why: str) -> Forecaster:
    """The fitted forecaster described by a validated manifest."""
    name = manifest.model
    hp = manifest.hyper_parameters
    if name not in PERSISTABLE:
        raise InvalidModelFile(f"{why}: unknown model {name!r}")
    try:
        if name in _LGBM:
            return _restore_lgbm(manifest, boosters, hp)
        if name == "drift":
            from foretab.forecast.baselines import DriftForecaster

            drift = _array(manifest.drift, (MAX_HORIZON,), "drift")
            forecaster = DriftForecaster(manifest.seed, lookback=_int(hp, "lookback"))
            forecaster.drift = drift
            return forecaster
    except (ValueError, TypeError, KeyError) as exc:
        raise InvalidModelFile(f"{why}: {_short(exc)}") from exc
    from foretab.forecast.registry import get_forecaster

    return get_forecaster(name, manifest.seed)


def _restore_lgbm(manifest: Manifest, boosters: list[str], hp: dict[str, HyperValue]) -> Forecaster:
    import lightgbm as lgb

    from foretab.forecast.gbm import LightGBMForecaster

    if not boosters:
        raise ValueError("a LightGBM model needs at least one booster")
    calendar = hp["calendar"]
    uses_market = hp.get("market", False)
    if not isinstance(calendar, bool) or not isinstance(uses_market, bool):
        raise TypeError("hyper-parameters 'calendar' and 'market' must be true or false")
    forecaster = LightGBMForecaster(
        manifest.seed,
        lookback=_int(hp, "lookback"),
        calendar=calendar,
        n_jobs=_int(hp, "num_threads"),
        market=uses_market,
    )
    residuals = _array(manifest.residual_quantiles, (MAX_HORIZON, 101), "residual_quantiles")
    market = _market(manifest) if uses_market else None
    spread = None
    if manifest.residual_spread is not None:
        from foretab.forecast.spread import Spread

        spread = Spread.from_list(manifest.residual_spread)
    free = hp.get("calendar_free_members", 0)
    weight = hp.get("calendar_free_weight", 0.0)
    if isinstance(free, bool) or not isinstance(free, int) or not 0 <= free < len(boosters):
        raise TypeError("hyper-parameter 'calendar_free_members' must count some boosters")
    if isinstance(weight, bool) or not isinstance(weight, int | float) or not 0 <= weight <= 1:
        raise TypeError("hyper-parameter 'calendar_free_weight' must lie in [0, 1]")
    if free and not calendar:
        raise TypeError("a calendar-free member needs a model with the calendar feature")
    forecaster.calendar_free_weight = float(weight) if free else 0.0
    try:
        parsed = [lgb.Booster(model_str=text) for text in boosters]
    except lgb.basic.LightGBMError as exc:
        raise ValueError(f"a booster is not a LightGBM text model ({_short(exc)})") from exc
    cut = len(parsed) - free
    return forecaster.restore(
        parsed[:cut], residuals, market, spread, manifest.interval_drift, parsed[cut:]
    )


def _market(manifest: Manifest) -> Market:
    from foretab.forecast.market import ALL, Market

    keys = manifest.market_keys
    if not keys or ALL not in keys or len(set(keys)) != len(keys):
        raise ValueError("market_keys must name distinct groups, the whole corpus included")
    months = len(manifest.market_change[0]) if manifest.market_change else 0
    shape = (len(keys), months)
    change = _array_nan(manifest.market_change, shape, "market_change")
    level = _array_nan(manifest.market_level, shape, "market_level")
    return Market(tuple(keys), change, level)


def _nullable(values: np.ndarray) -> list[list[float | None]]:
    return [[float(v) if np.isfinite(v) else None for v in row] for row in values]


def _array_nan(values: object, shape: tuple[int, int], name: str) -> np.ndarray:
    """A ``[G, T]`` array where ``null`` means missing; any other non-number is refused."""
    if not isinstance(values, list) or len(values) != shape[0]:
        raise ValueError(f"{name} must have one row per market group")
    rows = []
    for row in values:
        if not isinstance(row, list) or len(row) != shape[1]:
            raise ValueError(f"{name} rows must all be {shape[1]} months long")
        rows.append([np.nan if v is None else v for v in row])
    arr = np.asarray(rows, dtype=float).reshape(shape)
    if np.isinf(arr).any():
        raise ValueError(f"{name} must hold finite numbers or null")
    return arr


def _int(hp: dict[str, HyperValue], key: str) -> int:
    value = hp[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise TypeError(f"hyper-parameter {key!r} must be a positive integer, got {value!r}")
    return value


def _array(values: object, shape: tuple[int, ...], name: str) -> np.ndarray:
    if values is None:
        raise ValueError(f"{name} is missing")
    arr = np.asarray(values, dtype=float)
    if arr.shape != shape or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite numbers of shape {shape}, got {arr.shape}")
    return arr
