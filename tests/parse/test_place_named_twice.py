"""A project named like a city that is also a district's name (seen at 100x the corpus)."""

from __future__ import annotations

import contextlib

from foretab.core.catalog import EntityEntry
from foretab.core.months import Month
from foretab.errors import ForetabError
from foretab.parse.entities import EntityIndex, MentionKind

PLACES = [
    ("Beta", "Delta District", "Omega"),
    ("Beta", "Epsilon District", "Sigma"),
    ("Zeta", "Beta District", "Beta"),  # "beta": a city, a district and this project
    ("Zeta", "Beta District", "Kappa"),
]


def _index() -> EntityIndex:
    month = Month(2021, 1)
    return EntityIndex([EntityEntry(c, d, p, month, month, 1) for c, d, p in PLACES])


def test_a_project_mention_keeps_only_the_place_ids_of_its_place_kind() -> None:
    index = _index()
    mention = next(m for m in index.find_mentions("Compare Beta and Omega") if m.text == "Beta")
    assert mention.kind is MentionKind.ENTITY
    assert mention.also_place_kind is MentionKind.OUTER
    assert [index.outers[i] for i in mention.also_place] == ["Beta"]


def test_linking_it_beside_another_project_does_not_fail() -> None:
    # The district's id (2) was read as a city id: IndexError, 2 cities.
    with contextlib.suppress(ForetabError):
        _index().link("Compare Beta and Omega")
