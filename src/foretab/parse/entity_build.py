"""The entity index's data: built from the catalog's entities, or loaded with the store.

``build_arrays`` turns the store's entities (one per project) into flat numpy arrays: the
entities' columns, the places, and ``KeyTable``s of every normalised name. ``EntityIndex``
(``foretab.parse.entities``) links questions against these arrays whether they were
built now or read from the file ingest saved (``foretab.parse.entity_file``), so both give
the same answers. This module is part of the saved file's fingerprint: a change here (or
in ``foretab.parse.text``) makes a saved index stale, and it is built again.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields

import numpy as np

from foretab.core.catalog import EntityEntry
from foretab.parse.keytable import KeyTable, KeyTableError, TextColumn
from foretab.parse.phrases import PHRASES
from foretab.parse.text import has_cjk, normalize
from foretab.parse.vocabulary import PLACE_SUFFIXES, SUFFIX_VARIANTS

#: Tags of a ``KeyTable`` value: which kind of id it is.
ENTITY, INNER, OUTER = 0, 1, 2


@dataclass(frozen=True, eq=False)
class TextLists:
    """A list of strings per row: row ``i`` is ``texts[offsets[i]:offsets[i + 1]]``."""

    offsets: np.ndarray  # int64, len n + 1
    texts: TextColumn

    @classmethod
    def of(cls, rows: Sequence[Sequence[str]]) -> TextLists:
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum([len(r) for r in rows], out=offsets[1:])
        return cls(offsets, TextColumn.of(t for r in rows for t in r))

    def __getitem__(self, i: int) -> tuple[str, ...]:
        return tuple(self.texts[j] for j in range(self.offsets[i], self.offsets[i + 1]))


@dataclass(frozen=True, eq=False)
class IdLists:
    """A list of ids per row (CSR): row ``i`` is ``ids[offsets[i]:offsets[i + 1]]``."""

    offsets: np.ndarray  # int64, len n + 1
    ids: np.ndarray  # int32

    @classmethod
    def of(cls, rows: Sequence[Sequence[int]]) -> IdLists:
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum([len(r) for r in rows], out=offsets[1:])
        return cls(offsets, np.array([i for r in rows for i in r], dtype=np.int32))

    def __getitem__(self, i: int) -> list[int]:
        return self.ids[int(self.offsets[i]) : int(self.offsets[i + 1])].tolist()


@dataclass(frozen=True, eq=False)
class IndexArrays:
    """Everything the entity index reads, as arrays (``pid``: an entity's position)."""

    # entities, by pid
    inner_id: np.ndarray  # int32: the entity's inner place
    names: TextColumn
    normal: TextColumn  # normalize(name)
    aliases: TextLists
    outer_aliases: TextLists
    inner_aliases: TextLists
    first_month: np.ndarray  # int32, Month.index
    last_month: np.ndarray  # int32
    n_months: np.ndarray  # int32
    # places: outer ids in order of first appearance, inner ids likewise
    outers: TextColumn
    outer_zh: TextColumn
    inner_outer: np.ndarray  # int32: each inner place's outer id
    inners: TextColumn
    inner_zh: TextColumn
    by_outer: IdLists  # pids of each outer place, ascending
    by_inner: IdLists
    # normalised names → ids (``KeyTable`` tags: ENTITY, INNER, OUTER)
    entity_keys: KeyTable  # names and Latin aliases → pids
    compact_keys: KeyTable  # the same without spaces
    cjk: KeyTable  # Chinese names (projects, districts, cities, short place names)
    place_keys: KeyTable  # place names and their variants → (kind, place id)
    place_compact: KeyTable  # one-word place keys without spaces

    def __len__(self) -> int:
        return len(self.names)

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Named arrays for an index file (no object arrays: nothing to unpickle)."""
        out: dict[str, np.ndarray] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, KeyTable):
                out.update(value.arrays(f.name))
            elif isinstance(value, TextColumn):
                out[f"{f.name}.text"], out[f"{f.name}.starts"] = value.text, value.starts
            elif isinstance(value, TextLists):
                out[f"{f.name}.offsets"] = value.offsets
                out[f"{f.name}.text"] = value.texts.text
                out[f"{f.name}.starts"] = value.texts.starts
            elif isinstance(value, IdLists):
                out[f"{f.name}.offsets"], out[f"{f.name}.ids"] = value.offsets, value.ids
            else:
                out[f.name] = value
        return out

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> IndexArrays:
        """The index ``arrays`` hold, checked (``KeyTableError`` says what is wrong).

        Types, lengths and every id's range are checked, so a crafted file cannot make a
        lookup index past an array; it runs no code (the arrays are plain numbers and bytes).
        """

        def get(name: str, dtype: type) -> np.ndarray:
            if name not in arrays:
                raise KeyTableError(f"no array {name!r}")
            array = arrays[name]
            if array.dtype != np.dtype(dtype) or array.ndim != 1:
                raise KeyTableError(f"{name}: expected a 1-d {np.dtype(dtype)} array")
            return array

        def text(name: str) -> TextColumn:
            column = TextColumn(get(f"{name}.text", np.uint8), get(f"{name}.starts", np.int64))
            column.check(name)
            return column

        def text_lists(name: str, rows: int) -> TextLists:
            lists = TextLists(get(f"{name}.offsets", np.int64), text(name))
            _check_offsets(lists.offsets, rows, len(lists.texts), name)
            return lists

        def id_lists(name: str, rows: int, limit: int) -> IdLists:
            lists = IdLists(get(f"{name}.offsets", np.int64), get(f"{name}.ids", np.int32))
            _check_offsets(lists.offsets, rows, len(lists.ids), name)
            _check_range(lists.ids, limit, name)
            return lists

        names = text("names")
        n = len(names)
        outers, inners = text("outers"), text("inners")
        n_outer, n_inner = len(outers), len(inners)
        months = [get(k, np.int32) for k in ("first_month", "last_month", "n_months")]
        inner_outer = get("inner_outer", np.int32)
        _check_range(inner_outer, n_outer, "inner_outer")
        place_limit = max(n_outer, n_inner)
        built = cls(
            inner_id=get("inner_id", np.int32),
            names=names,
            normal=text("normal"),
            aliases=text_lists("aliases", n),
            outer_aliases=text_lists("outer_aliases", n),
            inner_aliases=text_lists("inner_aliases", n),
            first_month=months[0],
            last_month=months[1],
            n_months=months[2],
            outers=outers,
            outer_zh=text("outer_zh"),
            inner_outer=inner_outer,
            inners=inners,
            inner_zh=text("inner_zh"),
            by_outer=id_lists("by_outer", n_outer, n),
            by_inner=id_lists("by_inner", n_inner, n),
            entity_keys=KeyTable.from_arrays(arrays, "entity_keys", n),
            compact_keys=KeyTable.from_arrays(arrays, "compact_keys", n),
            cjk=KeyTable.from_arrays(arrays, "cjk", max(n, place_limit)),
            place_keys=KeyTable.from_arrays(arrays, "place_keys", place_limit),
            place_compact=KeyTable.from_arrays(arrays, "place_compact", place_limit),
        )
        _check_range(built.inner_id, n_inner, "inner_id")
        per_entity = (built.inner_id, built.normal, *months)
        if any(len(column) != n for column in per_entity):
            raise KeyTableError("the entity columns' lengths do not agree")
        if len(inner_outer) != n_inner or len(built.inner_zh) != n_inner:
            raise KeyTableError("the inner places' columns' lengths do not agree")
        if len(built.outer_zh) != n_outer:
            raise KeyTableError("the outer places' columns' lengths do not agree")
        if n and (int(months[0].min()) < 0 or int(months[1].min()) < 0):
            raise KeyTableError("a month is out of range")
        for table in (built.place_keys, built.place_compact):
            if len(table.tags) and not bool(np.isin(table.tags, (INNER, OUTER)).all()):
                raise KeyTableError("a place key's kind is out of range")
            # An inner id must index the inner places, an outer id the outer places.
            limit = np.where(table.tags == INNER, n_inner, n_outer)
            if bool(np.any(table.values >= limit)):
                raise KeyTableError("a place key's id is out of range")
        cjk = built.cjk
        if len(cjk.tags) and not bool(np.isin(cjk.tags, (ENTITY, INNER, OUTER)).all()):
            raise KeyTableError("a Chinese name's kind is out of range")
        return built


def _check_offsets(offsets: np.ndarray, rows: int, size: int, name: str) -> None:
    if len(offsets) != rows + 1 or offsets[0] != 0 or offsets[-1] != size:
        raise KeyTableError(f"{name}: the offsets do not cover its rows")
    if bool(np.any(np.diff(offsets) < 0)):
        raise KeyTableError(f"{name}: the offsets go backwards")


def _check_range(ids: np.ndarray, limit: int, name: str) -> None:
    if len(ids) and (int(ids.min()) < 0 or int(ids.max()) >= limit):
        raise KeyTableError(f"{name}: an id is out of range")


def zh_alias(aliases: Iterable[str]) -> str:
    """The first Chinese name among ``aliases``, or ""."""
    return next((a for a in aliases if has_cjk(a)), "")


def short_zh(alias: str, *suffixes: str) -> str | None:
    """A Chinese place name without its level suffix (南京市 → 南京), if two characters remain."""
    for suffix in suffixes:
        if alias.endswith(suffix) and len(alias) - len(suffix) >= 2:
            return alias[: -len(suffix)]
    return None


def place_keys(name: str, aliases: Iterable[str]) -> set[str]:
    """The normalised forms a place is named by ("jiangning district", "jiangning", …)."""
    keys = {normalize(name)}
    for suffix in PLACE_SUFFIXES:
        for key in list(keys):
            if key.endswith(" " + suffix):
                keys.add(key[: -len(suffix) - 1])
    keys |= {normalize(alias) for alias in aliases if alias and not has_cjk(alias)}
    for suffix, variants in SUFFIX_VARIANTS.items():
        for key in list(keys):
            if key == suffix or key.endswith(" " + suffix):
                base = key[: -len(suffix)]
                keys |= {base + variant for variant in variants}
    keys |= {key.replace("high tech", "hi tech") for key in keys if "high tech" in key}
    return {key for key in keys if key}


def build_arrays(entries: Sequence[EntityEntry]) -> IndexArrays:
    """The index of ``entries`` (a few seconds per 100,000 entities: done at ingest)."""
    entity_keys: dict[str, list[int]] = defaultdict(list)
    compact_keys: dict[str, list[int]] = defaultdict(list)
    cjk: dict[str, tuple[int, list[int]]] = {}
    outers: list[str] = []
    inners: list[tuple[str, str]] = []
    outer_zh: list[str] = []
    inner_zh: list[str] = []
    place_map: dict[str, list[tuple[int, int]]] = defaultdict(list)
    by_outer: list[list[int]] = []
    by_inner: list[list[int]] = []
    normal: list[str] = []
    outer_ids: dict[str, int] = {}
    inner_ids: dict[tuple[str, str], int] = {}
    short_names: list[tuple[str, int]] = []  # districts' Chinese names, for 江宁 / 浦东
    for pid, entry in enumerate(entries):
        key = normalize(entry.name)
        normal.append(key)
        names = {key} | {normalize(a) for a in entry.aliases if a and not has_cjk(a)}
        for name in names - {""}:
            entity_keys[name].append(pid)
            compact_keys[name.replace(" ", "")].append(pid)
        for alias in entry.aliases:
            if has_cjk(alias):
                cjk.setdefault(alias, (ENTITY, []))[1].append(pid)
        if entry.outer not in outer_ids:
            outer_id = outer_ids[entry.outer] = len(outers)
            outers.append(entry.outer)
            outer_zh.append(zh_alias(entry.outer_aliases))
            by_outer.append([])
            keys = place_keys(entry.outer, entry.outer_aliases)
            keys |= {f"{key} {suffix}" for key in keys for suffix in PHRASES.outer_suffixes}
            for name in keys:
                place_map[name].append((OUTER, outer_id))
            for alias in entry.outer_aliases:
                if has_cjk(alias):
                    cjk[alias] = (OUTER, [outer_id])
                    short = short_zh(alias, "市")
                    if short and short not in cjk:
                        cjk[short] = (OUTER, [outer_id])
        place = (entry.outer, entry.inner)
        if place not in inner_ids:
            inner_id = inner_ids[place] = len(inners)
            inners.append(place)
            inner_zh.append(zh_alias(entry.inner_aliases))
            by_inner.append([])
            for name in place_keys(entry.inner, entry.inner_aliases):
                place_map[name].append((INNER, inner_id))
            for alias in entry.inner_aliases:
                if has_cjk(alias):
                    cjk.setdefault(alias, (INNER, []))[1].append(inner_id)
                    short_names.append((alias, inner_id))
        by_outer[outer_ids[entry.outer]].append(pid)
        by_inner[inner_ids[place]].append(pid)
    # Short place names as people type them ("江宁", "浦东", "南京"): only where no
    # full name (a project's, another place's) is spelt the same.
    full = set(cjk)
    for alias, inner_id in short_names:
        short = short_zh(alias, "新区", "区", "县")
        if short and short not in full:
            kind_ids = cjk.setdefault(short, (INNER, []))
            if inner_id not in kind_ids[1]:
                kind_ids[1].append(inner_id)
    # "Bao an" / "Jiang ning": places also match with their spaces removed.
    place_compact = {
        key.replace(" ", ""): value for key, value in place_map.items() if " " not in key
    }
    return IndexArrays(
        inner_id=np.array([inner_ids[(e.outer, e.inner)] for e in entries], dtype=np.int32),
        names=TextColumn.of(e.name for e in entries),
        normal=TextColumn.of(normal),
        aliases=TextLists.of([e.aliases for e in entries]),
        outer_aliases=TextLists.of([e.outer_aliases for e in entries]),
        inner_aliases=TextLists.of([e.inner_aliases for e in entries]),
        first_month=np.array([e.first_month.index for e in entries], dtype=np.int32),
        last_month=np.array([e.last_month.index for e in entries], dtype=np.int32),
        n_months=np.array([e.n_months for e in entries], dtype=np.int32),
        outers=TextColumn.of(outers),
        outer_zh=TextColumn.of(outer_zh),
        inner_outer=np.array([outer_ids[o] for o, _ in inners], dtype=np.int32),
        inners=TextColumn.of(i for _, i in inners),
        inner_zh=TextColumn.of(inner_zh),
        by_outer=IdLists.of(by_outer),
        by_inner=IdLists.of(by_inner),
        entity_keys=KeyTable.of({k: [(ENTITY, p) for p in v] for k, v in entity_keys.items()}),
        compact_keys=KeyTable.of({k: [(ENTITY, p) for p in v] for k, v in compact_keys.items()}),
        cjk=KeyTable.of({k: [(kind, i) for i in ids] for k, (kind, ids) in cjk.items()}),
        place_keys=KeyTable.of(place_map),
        place_compact=KeyTable.of(place_compact),
    )
