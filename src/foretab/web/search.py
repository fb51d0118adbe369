"""Project search for ``GET /api/projects``: every word must appear in the project's names."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from foretab.core.catalog import EntityEntry


def _fold(text: str) -> str:
    # NFKC folds full-width letters and digits typed on Chinese keyboards.
    return unicodedata.normalize("NFKC", text).casefold()


def search_projects(
    projects: Sequence[EntityEntry],
    q: str,
    *,
    city: str | None = None,
    district: str | None = None,
) -> list[EntityEntry]:
    """Projects (catalog order) whose names contain every word of ``q``.

    Names are the project's, district's and city's, English or Chinese; ``city`` and
    ``district`` match exactly (any case).
    """
    words = [_fold(w) for w in q.split()]
    city_f = _fold(city.strip()) if city else None
    district_f = _fold(district.strip()) if district else None
    found = []
    for p in projects:
        if city_f is not None and city_f not in {_fold(p.outer), *map(_fold, p.outer_aliases)}:
            continue
        if district_f is not None and district_f not in {
            _fold(p.inner),
            *map(_fold, p.inner_aliases),
        }:
            continue
        names = " ".join((p.name, p.inner, p.outer, *p.aliases, *p.inner_aliases, *p.outer_aliases))
        haystack = _fold(names)
        if all(w in haystack for w in words):
            found.append(p)
    return found
