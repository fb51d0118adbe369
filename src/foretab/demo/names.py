"""Project names in the style of the real corpus, with their Chinese originals.

Romanised pinyin with a few words translated (developer brands, "Garden", "Phase 2").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# (English, Chinese). Brands are real developers, as in the real corpus's names.
_BRANDS: tuple[tuple[str, str], ...] = (
    ("Vanke", "万科"),
    ("Poly", "保利"),
    ("Country Garden", "碧桂园"),
    ("Greentown", "绿城"),
    ("China Resources", "华润"),
    ("Longfor", "龙湖"),
    ("Sunac", "融创"),
    ("China Overseas", "中海"),
    ("Gemdale", "金地"),
    ("Seazen", "新城"),
    ("C&D", "建发"),
    ("Yuexiu", "越秀"),
)
_CORES: tuple[tuple[str, str], ...] = (
    ("Tianyue", "天悦"),
    ("Yunxi", "云玺"),
    ("Jinlan", "锦澜"),
    ("Xiyuan", "熙园"),
    ("Guanlan", "观澜"),
    ("Lanting", "澜庭"),
    ("Yuefu", "悦府"),
    ("Huating", "华庭"),
    ("Jiangwan", "江湾"),
    ("Shanshui", "山水"),
    ("Cuiwei", "翠微"),
    ("Jingyuan", "璟园"),
    ("Yunlu", "云麓"),
    ("Haiyue", "海月"),
    ("Chenyuan", "宸园"),
    ("Mingyue", "明月"),
    ("Qinyuan", "沁园"),
    ("Zijing", "紫荆"),
    ("Jinxiu", "锦绣"),
    ("Taoli", "桃李"),
    ("Fenghua", "风华"),
    ("Yunjing", "云境"),
    ("Tanyue", "潭悦"),
    ("Shijia", "世家"),
    ("Hexie", "和谐"),
    ("Xingfu", "幸福"),
    ("Longxi", "龙溪"),
    ("Binhu", "滨湖"),
    ("Hupan", "湖畔"),
    ("Yuecheng", "悦城"),
)
_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("", ""),
    ("", ""),
    ("Garden", "花园"),
    ("City", "城"),
    ("Mansion", "府"),
    ("Residence", "公馆"),
    ("Bay", "湾"),
    ("Park", "公园"),
)
_PHASES: tuple[tuple[str, str], ...] = (("Phase 2", "二期"), ("Phase 3", "三期"))


@dataclass(frozen=True, slots=True)
class ProjectName:
    """A project's English name and its Chinese original."""

    name: str
    name_zh: str


def _pick(rng: np.random.Generator, options: tuple[tuple[str, str], ...]) -> tuple[str, str]:
    return options[int(rng.integers(len(options)))]


def _candidate(rng: np.random.Generator) -> ProjectName:
    parts: list[tuple[str, str]] = []
    if rng.random() < 0.55:
        parts.append(_pick(rng, _BRANDS))
    parts.append(_pick(rng, _CORES))
    if rng.random() < 0.25:
        parts.append(_pick(rng, _CORES))
    parts.append(_pick(rng, _SUFFIXES))
    if rng.random() < 0.08:
        parts.append(_pick(rng, _PHASES))
    english = " ".join(p[0] for p in parts if p[0])
    chinese = "".join(p[1] for p in parts)
    return ProjectName(english, chinese)


def project_names(rng: np.random.Generator, count: int, taken: set[str]) -> list[ProjectName]:
    """``count`` names not in ``taken`` (the district's names so far); adds them to it.

    Names repeat across districts, as in the real corpus, which is what makes entity
    linking need the district.
    """
    names: list[ProjectName] = []
    while len(names) < count:
        candidate = _candidate(rng)
        if candidate.name not in taken:
            taken.add(candidate.name)
            names.append(candidate)
    return names
