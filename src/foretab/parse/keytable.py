"""Text keys → lists of small integers, held in numpy arrays instead of Python dicts.

The entity index's dictionaries (every normalised name, its prefixes, the Chinese names)
held one Python object per key: at 100x the corpus, ~420,000 names and millions of
prefixes, seconds to build or to rebuild from a file whenever a store opened. A
``KeyTable`` is a few flat arrays (sorted UTF-8 keys, their values in CSR form) that are
saved with the store and loaded as they are; a lookup is a binary search.

Keys are sorted by their UTF-8 bytes, which is their code-point order. ``heads`` holds
each key's first ``HEAD_BYTES`` bytes as a fixed-width numpy bytes array (what
``np.searchsorted`` searches); longer keys are told apart through their full bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

HEAD_BYTES = 32  # most normalised names are shorter; a longer key is checked in full
_SEEN_MAX = 1 << 16  # lookups remembered per table

#: The arrays of one table, by suffix: ``{name}.heads`` etc. in an index file.
PARTS = ("heads", "text", "starts", "offsets", "values", "tags")


class KeyTableError(ValueError):
    """Arrays that do not form a key table (a corrupt or crafted index file)."""


@dataclass(frozen=True, eq=False)
class TextColumn:
    """Strings as one UTF-8 buffer and offsets: ``text[starts[i]:starts[i + 1]]``."""

    text: np.ndarray  # uint8
    starts: np.ndarray  # int64, len n + 1

    @classmethod
    def of(cls, values: Iterable[str]) -> TextColumn:
        encoded = [v.encode() for v in values]
        starts = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(e) for e in encoded], out=starts[1:])
        return cls(np.frombuffer(b"".join(encoded), dtype=np.uint8), starts)

    def __len__(self) -> int:
        return len(self.starts) - 1

    def raw(self, i: int) -> bytes:
        return self.text[self.starts[i] : self.starts[i + 1]].tobytes()

    def __getitem__(self, i: int) -> str:
        return self.raw(i).decode()

    def check(self, what: str) -> None:
        """Raise ``KeyTableError`` unless the offsets are a valid cut of valid UTF-8."""
        _dtype(self.text, np.uint8, what)
        _dtype(self.starts, np.int64, what)
        starts = self.starts
        if starts.ndim != 1 or len(starts) < 1 or starts[0] != 0:
            raise KeyTableError(f"{what}: the offsets must start at 0")
        if starts[-1] != len(self.text) or bool(np.any(np.diff(starts) < 0)):
            raise KeyTableError(f"{what}: the offsets must rise to the text's length")
        try:
            self.text.tobytes().decode()
        except UnicodeDecodeError:
            raise KeyTableError(f"{what}: not UTF-8 text") from None


@dataclass(frozen=True, eq=False)
class KeyTable:
    """Sorted unique keys; key ``i``'s values are ``values[offsets[i]:offsets[i + 1]]``.

    ``tags``: one small integer per value (what kind of id it is), or per key repeated.
    """

    heads: np.ndarray  # S{HEAD_BYTES}
    keys: TextColumn
    offsets: np.ndarray  # int64, len n + 1
    values: np.ndarray  # int32
    tags: np.ndarray  # int8, one per value

    @classmethod
    def of(cls, mapping: Mapping[str, Iterable[tuple[int, int]]]) -> KeyTable:
        """A table of ``key → [(tag, value), ...]``, values kept in their order."""
        keys = sorted(mapping, key=str.encode)
        pairs = [list(mapping[k]) for k in keys]
        offsets = np.zeros(len(keys) + 1, dtype=np.int64)
        np.cumsum([len(p) for p in pairs], out=offsets[1:])
        flat = [pair for p in pairs for pair in p]
        return cls(
            np.array([k.encode()[:HEAD_BYTES] for k in keys], dtype=f"S{HEAD_BYTES}"),
            TextColumn.of(keys),
            offsets,
            np.array([v for _, v in flat], dtype=np.int32),
            np.array([t for t, _ in flat], dtype=np.int8),
        )

    def __len__(self) -> int:
        return len(self.heads)

    def __post_init__(self) -> None:
        # Questions repeat their words ("what", "the"): a lookup is a binary search (a few
        # microseconds), a repeated one a dict hit. Bounded; cleared when full.
        object.__setattr__(self, "_positions", {})
        object.__setattr__(self, "_prefixes", {})

    def _find(self, key: str) -> int:
        """The position of ``key``, or -1."""
        positions: dict[str, int] = self._positions  # type: ignore[attr-defined]
        found = positions.get(key)
        if found is None:
            if len(positions) >= _SEEN_MAX:
                positions.clear()
            found = positions[key] = self._search(key.encode())
        return found

    def _search(self, key: bytes) -> int:
        head = key[:HEAD_BYTES]
        i = int(np.searchsorted(self.heads, head))
        n = len(self.heads)
        if len(key) < HEAD_BYTES:  # the head is the whole key: one candidate
            return i if i < n and self.heads[i] == head else -1
        while i < n and self.heads[i] == head:
            if self.keys.raw(i) == key:
                return i
            i += 1
        return -1

    def get(self, key: str) -> list[tuple[int, int]] | None:
        """``[(tag, value), ...]`` of ``key`` in stored order, or None."""
        i = self._find(key)
        if i < 0:
            return None
        lo, hi = int(self.offsets[i]), int(self.offsets[i + 1])
        return list(zip(self.tags[lo:hi].tolist(), self.values[lo:hi].tolist(), strict=True))

    def ids(self, key: str) -> list[int] | None:
        """The values of ``key`` (tags dropped), or None."""
        i = self._find(key)
        if i < 0:
            return None
        return self.values[int(self.offsets[i]) : int(self.offsets[i + 1])].tolist()

    def has_prefix(self, prefix: str) -> bool:
        """True when some key starts with ``prefix``.

        May say True for a prefix longer than ``HEAD_BYTES`` that only shares its first
        ``HEAD_BYTES`` bytes with a key: callers use it to stop a scan early, not to match.
        """
        prefixes: dict[str, bool] = self._prefixes  # type: ignore[attr-defined]
        found = prefixes.get(prefix)
        if found is None:
            if len(prefixes) >= _SEEN_MAX:
                prefixes.clear()
            head = prefix.encode()[:HEAD_BYTES]
            i = int(np.searchsorted(self.heads, head))
            found = bool(head) and i < len(self.heads) and bytes(self.heads[i]).startswith(head)
            prefixes[prefix] = found
        return found

    def has_word_prefix(self, prefix: str) -> bool:
        """True when ``prefix`` is a key or a key's first words.

        That is ``key == prefix`` or ``key.startswith(prefix + " ")`` for some key.
        """
        return self._find(prefix) >= 0 or self.has_prefix(prefix + " ")

    def key_list(self) -> list[str]:
        """Every key, in order."""
        return [self.keys[i] for i in range(len(self.keys))]

    def arrays(self, name: str) -> dict[str, np.ndarray]:
        """The table as named arrays (``name.heads`` …), for an index file."""
        parts = (self.heads, self.keys.text, self.keys.starts, self.offsets, self.values)
        out = dict(zip((f"{name}.{p}" for p in PARTS), parts, strict=False))
        out[f"{name}.tags"] = self.tags
        return out

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray], name: str, limit: int) -> KeyTable:
        """The table ``arrays`` hold under ``name``, checked; values must be in ``[0, limit)``.

        Raises ``KeyTableError`` for missing arrays, wrong types or lengths, unsorted keys,
        text that is not UTF-8 or values out of range: a lookup can then never index past
        an array.
        """
        try:
            heads, text, starts, offsets, values, tags = (arrays[f"{name}.{p}"] for p in PARTS)
        except KeyError as missing:
            raise KeyTableError(f"no array {missing}") from None
        keys = TextColumn(text, starts)
        keys.check(name)
        if heads.dtype != np.dtype(f"S{HEAD_BYTES}") or heads.ndim != 1:
            raise KeyTableError(f"{name}.heads: expected S{HEAD_BYTES}, got {heads.dtype}")
        for array, dtype in ((offsets, np.int64), (values, np.int32), (tags, np.int8)):
            _dtype(array, dtype, name)
        n = len(heads)
        if len(keys) != n or len(offsets) != n + 1 or len(tags) != len(values):
            raise KeyTableError(f"{name}: its arrays' lengths do not agree")
        if offsets[0] != 0 or offsets[-1] != len(values) or bool(np.any(np.diff(offsets) < 1)):
            raise KeyTableError(f"{name}: every key needs values, in order")
        if len(values) and (int(values.min()) < 0 or int(values.max()) >= limit):
            raise KeyTableError(f"{name}: a value is out of range")
        # Checked whole-array (a per-key loop would cost what loading saves): the heads
        # sorted; a head that does not match its key only makes a lookup miss.
        if n > 1 and not bool(np.all(heads[:-1] <= heads[1:])):
            raise KeyTableError(f"{name}: the keys are not sorted")
        return cls(heads, keys, offsets, values, tags)


def _dtype(array: np.ndarray, dtype: type, what: str) -> None:
    if not isinstance(array, np.ndarray) or array.dtype != np.dtype(dtype) or array.ndim != 1:
        got = getattr(array, "dtype", type(array).__name__)
        raise KeyTableError(f"{what}: expected a 1-d {np.dtype(dtype)} array, got {got}")
