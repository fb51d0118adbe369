"""Project search for ``GET /api/projects``: every word must appear in the project's names."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from foretab.core.catalog import ProjectEntry


def _fold(text: str) -> str:
    # NFKC folds full-width letters and digits typed on Chinese keyboards.
    return unicodedata.normalize("NFKC", text).casefold()


def search_projects(
    projects: Sequence[ProjectEntry],
    q: str,
    *,
    city: str | None = None,
    district: str | None = None,
) -> list[ProjectEntry]:
    """Projects (catalog order) whose names contain every word of ``q``.

    Names are the project's, district's and city's, English or Chinese; ``city`` and
    ``district`` match exactly (any case).
    """
    words = [_fold(w) for w in q.split()]
    city_f = _fold(city.strip()) if city else None
    district_f = _fold(district.strip()) if district else None
    found = []
    for p in projects:
        if city_f is not None and city_f not in {_fold(p.city), *map(_fold, p.city_aliases)}:
            continue
        if district_f is not None and district_f not in {
            _fold(p.district),
            *map(_fold, p.district_aliases),
        }:
            continue
        names = " ".join(
            (p.project, p.district, p.city, *p.aliases, *p.district_aliases, *p.city_aliases)
        )
        haystack = _fold(names)
        if all(w in haystack for w in words):
            found.append(p)
    return found
