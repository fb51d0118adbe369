"""Data-only model files: a zip of a JSON manifest, LightGBM's own text models and arrays.

Opening a store from someone else must run no code from it (docs/design.md §1), so nothing here
unpickles: the manifest is validated by a pydantic model with ``extra="forbid"``, small
numeric state (residual quantiles, drift) is plain JSON, the market signals are ``.npy``
float arrays read with ``allow_pickle=False`` (format 2), and boosters are parsed by
LightGBM from its text format. Any other content is an invalid model file.

Format 1 held the market signals as JSON lists in the manifest: at 100x the corpus (11,001
groups by 48 months, twice) parsing and checking them was ~0.3 s of every cold start.
Format 2 is written since; a format 1 file is still read as it always was.
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
    from foretab.forecast.calibrate import Tails
    from foretab.forecast.market import Market

FORMAT = "foretab-store-model"
FORMAT_VERSION = 2
MANIFEST = "manifest.json"
#: Format 2: the market signals' archive members (``[groups, months]`` float64, NaN = too
#: few observations), stored uncompressed
MARKET_MEMBERS = ("market_change.npy", "market_level.npy")
#: A fitted default model is a few MB; anything far larger is not one of ours.
MAX_MEMBER_BYTES = 256 * 1024 * 1024
#: Models whose fitted state has a data-only encoding below. The torch models
#: (timesnet, timexer, nhits, patchtst, tide) have none yet, so they cannot be a store's model.
PERSISTABLE = ("naive", "drift", "autoets", "autotheta", "lgbm", "lgbm_nocal", "lgbm_market")
#: The LightGBM models (boosters + residual grid, and market signals when they read them).
_LGBM = ("lgbm", "lgbm_nocal", "lgbm_market")
_MONTH = r"^\d{4}-\d{2}$"
#: Hyper-parameters recording the factors on the grid's lower and upper halves
#: (``calibrate.fit_tails``); the grid in the file already has them applied.
TAIL_KEYS = ("tail_lower", "tail_upper")

HyperValue = bool | int | float | str


class Manifest(BaseModel):
    """``manifest.json``: what the model is, when it was fitted, and its numeric state."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: Literal["foretab-store-model"]
    format_version: Literal[1, 2]
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
    #: the median log change and log level (``null`` = too few observations); the two
    #: arrays are ``MARKET_MEMBERS`` in format 2, these lists in format 1 only
    market_keys: list[str] | None = None
    market_change: list[list[float | None]] | None = None
    market_level: list[list[float | None]] | None = None


class InvalidModelFile(ForecastError):
    """The stored model file is missing, corrupt, foreign or of another format."""


def write_archive(
    manifest: Manifest, boosters: list[str], arrays: dict[str, np.ndarray] | None = None
) -> bytes:
    """The zip bytes of ``manifest``, its boosters and ``arrays`` (member name -> array).

    Boosters in ``manifest.boosters`` order; arrays as ``.npy``, stored uncompressed.
    """
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        zf.writestr(MANIFEST, manifest.model_dump_json(indent=1))
        for member, text in zip(manifest.boosters, boosters, strict=True):
            zf.writestr(member, text)
        for member, array in (arrays or {}).items():
            npy = io.BytesIO()
            np.save(npy, array, allow_pickle=False)
            zf.writestr(member, npy.getvalue(), compress_type=zipfile.ZIP_STORED)
    return buf.getvalue()


def read_archive(data: bytes, why: str) -> tuple[Manifest, list[str], dict[str, np.ndarray]]:
    """Parse and validate an archive; ``why`` is prefixed to error messages.

    Returns the manifest, the booster texts and the arrays a format 2 manifest needs.
    """
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            manifest = Manifest.model_validate_json(_member(zf, MANIFEST))
            boosters = [_member(zf, name).decode("utf-8") for name in manifest.boosters]
            arrays = {name: _array_member(zf, name) for name in _array_members(manifest)}
    except (zipfile.BadZipFile, ValidationError, UnicodeDecodeError, KeyError, OSError) as exc:
        raise InvalidModelFile(f"{why}: {_short(exc)}") from exc
    except (ValueError, EOFError) as exc:  # truncated or corrupt deflate streams
        raise InvalidModelFile(f"{why}: {_short(exc)}") from exc
    return manifest, boosters, arrays


def _array_members(manifest: Manifest) -> tuple[str, ...]:
    """The ``.npy`` members ``manifest`` needs: the market signals of a format 2 file."""
    in_json = manifest.market_change is not None or manifest.market_level is not None
    if manifest.format_version == 2 and in_json:
        raise ValueError("a format 2 model keeps its market signals in .npy members")
    if manifest.format_version == 1 or manifest.market_keys is None:
        return ()
    return MARKET_MEMBERS


def _array_member(zf: zipfile.ZipFile, name: str) -> np.ndarray:
    """A ``.npy`` member: a plain float64 array (no pickle: ``allow_pickle=False``)."""
    array = np.load(io.BytesIO(_member(zf, name)), allow_pickle=False)
    if not isinstance(array, np.ndarray) or array.dtype != np.float64:
        raise ValueError(f"member {name!r} is not an array of float64 numbers")
    return array


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


def forecaster_state(
    name: str, forecaster: Forecaster
) -> tuple[dict[str, object], list[str], dict[str, np.ndarray]]:
    """Manifest fields, booster texts and array members of a fitted ``forecaster``."""
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
        if forecaster.tails is not None:
            # For the record only: the factors are already in ``residual_quantiles``,
            # so code that does not know these keys reads the same intervals.
            hyper[TAIL_KEYS[0]] = forecaster.tails.lower
            hyper[TAIL_KEYS[1]] = forecaster.tails.upper
        fields: dict[str, object] = {
            "hyper_parameters": hyper,
            "residual_quantiles": forecaster.residual_quantiles.tolist(),
            "boosters": [f"booster_{k}.txt" for k in range(len(texts))],
        }
        if forecaster.spread is not None:
            fields["residual_spread"] = forecaster.spread.as_list()
        if forecaster.location_drift:
            fields["interval_drift"] = forecaster.location_drift
        arrays: dict[str, np.ndarray] = {}
        if forecaster.market is not None:
            fields["market_keys"] = list(forecaster.market.keys)
            change, level = forecaster.market.change, forecaster.market.level
            arrays = dict(zip(MARKET_MEMBERS, (_nan_only(change), _nan_only(level)), strict=True))
        return fields, texts, arrays
    if name == "drift":
        from foretab.forecast.baselines import DriftForecaster

        assert isinstance(forecaster, DriftForecaster)
        return (
            {
                "hyper_parameters": {"lookback": forecaster.lookback},
                "drift": forecaster.drift.tolist(),
            },
            [],
            {},
        )
    return {}, [], {}  # naive, autoets, autotheta: no fitted state


def restore_forecaster(
    manifest: Manifest, boosters: list[str], why: str, arrays: dict[str, np.ndarray] | None = None
) -> Forecaster:
    """The fitted forecaster described by a validated manifest (and its array members)."""
    name = manifest.model
    hp = manifest.hyper_parameters
    if name not in PERSISTABLE:
        raise InvalidModelFile(f"{why}: unknown model {name!r}")
    try:
        if name in _LGBM:
            return _restore_lgbm(manifest, boosters, hp, arrays or {})
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


def _restore_lgbm(
    manifest: Manifest,
    boosters: list[str],
    hp: dict[str, HyperValue],
    arrays: dict[str, np.ndarray],
) -> Forecaster:
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
    market = _market(manifest, arrays) if uses_market else None
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
    tails = _tails(hp)
    try:
        parsed = [lgb.Booster(model_str=text) for text in boosters]
    except lgb.basic.LightGBMError as exc:
        raise ValueError(f"a booster is not a LightGBM text model ({_short(exc)})") from exc
    cut = len(parsed) - free
    return forecaster.restore(
        parsed[:cut], residuals, market, spread, manifest.interval_drift, parsed[cut:], tails
    )


def _tails(hp: dict[str, HyperValue]) -> Tails | None:
    """The recorded tail factors (``calibrate.fit_tails``), both or neither."""
    from foretab.forecast.calibrate import Tails

    lower, upper = (hp.get(key) for key in TAIL_KEYS)
    if lower is None and upper is None:
        return None
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (lower, upper)):
        raise TypeError(f"hyper-parameters {TAIL_KEYS} must both be numbers")
    return Tails(float(lower), float(upper))  # type: ignore[arg-type]


def _market(manifest: Manifest, arrays: dict[str, np.ndarray]) -> Market:
    from foretab.forecast.market import ALL, Market

    keys = manifest.market_keys
    if not keys or ALL not in keys or len(set(keys)) != len(keys):
        raise ValueError("market_keys must name distinct groups, the whole corpus included")
    if manifest.format_version == 1:
        months = len(manifest.market_change[0]) if manifest.market_change else 0
        shape = (len(keys), months)
        change = _array_nan(manifest.market_change, shape, "market_change")
        level = _array_nan(manifest.market_level, shape, "market_level")
    else:
        change_member, level_member = MARKET_MEMBERS
        months = arrays[change_member].shape[-1] if arrays[change_member].ndim == 2 else 0
        shape = (len(keys), months)
        change = _float_nan(arrays[change_member], shape, "market_change")
        level = _float_nan(arrays[level_member], shape, "market_level")
    return Market(tuple(keys), change, level)


def _nan_only(values: np.ndarray) -> np.ndarray:
    """``values`` as float64 with every non-finite number NaN (what format 1 wrote as null)."""
    return np.where(np.isfinite(values), values, np.nan).astype(np.float64)


def _float_nan(values: np.ndarray, shape: tuple[int, int], name: str) -> np.ndarray:
    """A ``[G, T]`` float64 array of an archive member where NaN means missing."""
    if values.shape != shape:
        raise ValueError(f"{name} must be one row of {shape[1]} months per market group")
    if np.isinf(values).any():
        raise ValueError(f"{name} must hold finite numbers or NaN")
    return np.array(values, dtype=np.float64, order="C")  # writable, native order


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
