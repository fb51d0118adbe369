"""Cities and districts of the synthetic demo corpus.

Real Chinese cities that are *not* in the shared real corpus, so a demo store is never
mistaken for real data. District names and price multipliers follow each city's real
layout (core districts dear, outer districts cheap) so that generated levels look right.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class DistrictProfile:
    """One district: English name as in ODTQA-FoRe captions, Chinese name, price factor."""

    name: str
    name_zh: str
    price_factor: float


@dataclass(frozen=True, slots=True)
class CityProfile:
    """One city: typical new-home price (yuan/m²) at the start of the corpus."""

    name: str
    name_zh: str
    base_price: float
    districts: tuple[DistrictProfile, ...]


def _d(name: str, name_zh: str, factor: float) -> DistrictProfile:
    return DistrictProfile(name, name_zh, factor)


CITIES: tuple[CityProfile, ...] = (
    CityProfile(
        "Xiamen",
        "厦门市",
        42000.0,
        (
            _d("Siming District", "思明区", 1.45),
            _d("Huli District", "湖里区", 1.25),
            _d("Jimei District", "集美区", 0.85),
            _d("Haicang District", "海沧区", 0.8),
            _d("Xiang'an District", "翔安区", 0.62),
            _d("Tong'an District", "同安区", 0.58),
        ),
    ),
    CityProfile(
        "Chengdu",
        "成都市",
        17500.0,
        (
            _d("Jinjiang District", "锦江区", 1.35),
            _d("Wuhou District", "武侯区", 1.25),
            _d("High-tech Zone", "高新区", 1.5),
            _d("Tianfu New Area", "天府新区", 1.1),
            _d("Chenghua District", "成华区", 1.0),
            _d("Shuangliu District", "双流区", 0.75),
            _d("Pidu District", "郫都区", 0.68),
        ),
    ),
    CityProfile(
        "Xi'an",
        "西安市",
        15500.0,
        (
            _d("Yanta District", "雁塔区", 1.3),
            _d("Beilin District", "碑林区", 1.2),
            _d("Lianhu District", "莲湖区", 1.05),
            _d("Weiyang District", "未央区", 0.95),
            _d("Baqiao District", "灞桥区", 0.85),
            _d("Chang'an District", "长安区", 0.75),
        ),
    ),
    CityProfile(
        "Qingdao",
        "青岛市",
        19500.0,
        (
            _d("Shinan District", "市南区", 1.6),
            _d("Laoshan District", "崂山区", 1.4),
            _d("Shibei District", "市北区", 1.05),
            _d("Licang District", "李沧区", 0.9),
            _d("Huangdao District", "黄岛区", 0.75),
            _d("Jimo District", "即墨区", 0.55),
        ),
    ),
)
