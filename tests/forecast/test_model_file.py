"""The model file's market signals (format 2): ``.npy`` members read without pickle.

Format 1 (the signals as JSON lists in the manifest) is still read, to the same numbers.
"""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest

from foretab.errors import ForecastError
from foretab.forecast.gbm import LightGBMForecaster
from foretab.forecast.persist import MARKET_MEMBERS
from foretab.forecast.store import StoreModel

from .archives import zip_members, zip_of
from .test_market import REF, SMALL, _district_panel, _places


@pytest.fixture(scope="module")
def model() -> StoreModel:
    values = _district_panel(n=20, t=24)
    market = LightGBMForecaster(0, market=True, **SMALL).fit(values, places=_places(20))
    return StoreModel("lgbm_market", REF, 24, 0.0, market, REF - 23, n_series=20)


def _npy(array: np.ndarray, allow_pickle: bool = False) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=allow_pickle)
    return buf.getvalue()


def test_the_market_signals_are_npy_members_stored_uncompressed(model: StoreModel) -> None:
    data = model.to_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        stored = {i.filename: i.compress_type for i in zf.infolist()}
        manifest = json.loads(zf.read("manifest.json"))
    assert manifest["format_version"] == 2 and manifest["market_keys"]
    assert "market_change" not in manifest or manifest["market_change"] is None
    assert all(stored[name] == zipfile.ZIP_STORED for name in MARKET_MEMBERS)
    again = StoreModel.from_bytes(data).forecaster.market
    market = model.forecaster.market  # type: ignore[attr-defined]
    np.testing.assert_array_equal(again.change, market.change)
    np.testing.assert_array_equal(again.level, market.level)
    assert again.keys == market.keys


def test_a_format_1_file_is_read_to_the_same_numbers(model: StoreModel) -> None:
    members = zip_members(model.to_bytes())
    manifest = json.loads(members.pop("manifest.json"))
    arrays = [np.load(io.BytesIO(members.pop(name))) for name in MARKET_MEMBERS]
    manifest["format_version"] = 1
    manifest["market_change"], manifest["market_level"] = (
        [[float(v) if np.isfinite(v) else None for v in row] for row in a] for a in arrays
    )
    old = StoreModel.from_bytes(zip_of({"manifest.json": json.dumps(manifest).encode(), **members}))
    market = model.forecaster.market  # type: ignore[attr-defined]
    np.testing.assert_array_equal(old.forecaster.market.change, market.change)
    np.testing.assert_array_equal(old.forecaster.market.level, market.level)


class _Payload:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (print, ("pwned",))


@pytest.mark.parametrize(
    ("member", "why"),
    [
        (_npy(np.array([_Payload()], dtype=object), allow_pickle=True), "allow_pickle=False"),
        (_npy(np.zeros((3, 3), dtype=np.float32)), "float64"),
        (_npy(np.zeros((3, 3))), "market_change"),  # not one row per group
        (b"not an array", "invalid"),
    ],
)
def test_a_crafted_market_member_is_refused(
    model: StoreModel, member: bytes, why: str, capsys: pytest.CaptureFixture[str]
) -> None:
    members = zip_members(model.to_bytes())
    members[MARKET_MEMBERS[0]] = member
    with pytest.raises(ForecastError, match=why):
        StoreModel.from_bytes(zip_of(members))
    assert "pwned" not in capsys.readouterr().out


def test_an_infinite_market_value_is_refused(model: StoreModel) -> None:
    members = zip_members(model.to_bytes())
    change = np.load(io.BytesIO(members[MARKET_MEMBERS[0]]))
    change[0, 0] = np.inf
    members[MARKET_MEMBERS[0]] = _npy(change)
    with pytest.raises(ForecastError, match="finite"):
        StoreModel.from_bytes(zip_of(members))


def test_a_format_2_manifest_with_json_market_lists_is_refused(model: StoreModel) -> None:
    members = zip_members(model.to_bytes())
    manifest = json.loads(members["manifest.json"])
    manifest["market_change"] = [[0.0]]
    members["manifest.json"] = json.dumps(manifest).encode()
    with pytest.raises(ForecastError, match="npy members"):
        StoreModel.from_bytes(zip_of(members))
