"""The entity index saved with the store: built once at ingest, loaded when an engine opens.

Building the index means normalising every project name: ~14 s of a cold start at 100x
the corpus (563,400 projects). Ingest builds it once and saves it as a store artifact
(``entity_index.npz``: numpy arrays only, read with ``allow_pickle=False``, so loading a
store from someone else runs no code); ``StoreContext`` loads it.

A saved index is used only when it was built from the generation the engine opened (the
ingest id is inside the file) and by the same index code (a fingerprint of the modules
that build it): a stale index would link names to the wrong projects. Otherwise, and for
a file that is missing, damaged or crafted, the engine builds the index as before and
says why (log ``foretab.index``).
"""

from __future__ import annotations

import hashlib
import io
import logging
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from foretab.parse import entity_build, keytable, text
from foretab.parse.entity_build import IndexArrays, build_arrays
from foretab.parse.keytable import KeyTableError
from foretab.parse.phrases import PHRASES
from foretab.parse.vocabulary import PLACE_SUFFIXES, SUFFIX_VARIANTS

if TYPE_CHECKING:
    from foretab.store.stores import HistoryStore

INDEX_ARTIFACT = "entity_index.npz"
#: Bump when the saved arrays change meaning (the fingerprint catches code edits too).
INDEX_FORMAT = 1

log = logging.getLogger("foretab.index")


class IndexFileError(ValueError):
    """A saved index that cannot be used; the message says why."""


def fingerprint() -> str:
    """What the saved arrays depend on besides the data: the code and words that build them."""
    digest = hashlib.sha256(f"format {INDEX_FORMAT}\n".encode())
    for module in (text, keytable, entity_build):
        digest.update(Path(str(module.__file__)).read_bytes())
    words = (sorted(PLACE_SUFFIXES), sorted(SUFFIX_VARIANTS.items()), PHRASES.outer_suffixes)
    digest.update(repr(words).encode())
    return digest.hexdigest()


def index_bytes(arrays: IndexArrays, generation: str | None) -> bytes:
    """The index file's bytes: ``arrays`` and what they were built from."""
    meta = {
        "meta.format": np.array([INDEX_FORMAT], dtype=np.int32),
        "meta.generation": np.array([(generation or "").encode()], dtype="S"),
        "meta.fingerprint": np.array([fingerprint().encode()], dtype="S"),
    }
    buffer = io.BytesIO()
    np.savez(buffer, **arrays.to_arrays(), **meta)
    return buffer.getvalue()


def read_index(data: bytes, generation: str | None) -> IndexArrays:
    """The arrays of an index file built for ``generation``; ``IndexFileError`` otherwise."""
    try:
        loaded = np.load(io.BytesIO(data), allow_pickle=False)
        if not isinstance(loaded, np.lib.npyio.NpzFile):
            raise IndexFileError("it is not an archive of arrays")
        with loaded as npz:
            # Stored, not deflated (``np.savez``): no member may expand past its bytes.
            if any(i.compress_type != zipfile.ZIP_STORED for i in npz.zip.infolist()):
                raise IndexFileError("it holds compressed members; foretab writes none")
            arrays = {name: npz[name] for name in npz.files}
    except IndexFileError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as error:
        # An object array (a pickle) is refused here: allow_pickle=False.
        raise IndexFileError(f"it is not an index file ({error})") from None
    try:
        format_, saved_for, saved_by = (
            arrays["meta.format"],
            arrays["meta.generation"],
            arrays["meta.fingerprint"],
        )
    except KeyError:
        raise IndexFileError("it records no format, generation or fingerprint") from None
    if format_.dtype != np.int32 or format_.shape != (1,) or int(format_[0]) != INDEX_FORMAT:
        raise IndexFileError(f"it is not index format {INDEX_FORMAT}")
    if saved_for.dtype.kind != "S" or saved_for.shape != (1,):
        raise IndexFileError("its generation is not text")
    if bytes(saved_for[0]).decode(errors="replace") != (generation or ""):
        raise IndexFileError("it was built from another ingest of the store (stale)")
    if saved_by.dtype.kind != "S" or bytes(saved_by[0]) != fingerprint().encode():
        raise IndexFileError("it was built by another version of foretab's entity linking")
    try:
        return IndexArrays.from_arrays(arrays)
    except KeyTableError as error:
        raise IndexFileError(f"its arrays are invalid: {error}") from None


def save_entity_index(store: HistoryStore) -> int:
    """Build the index of ``store``'s generation and save it with the store; its bytes."""
    data = index_bytes(build_arrays(store.entities()), store.generation)
    store.save_artifact(INDEX_ARTIFACT, data)
    return len(data)


def load_entity_index(store: HistoryStore) -> IndexArrays | None:
    """The saved index of ``store``'s generation, or None (logged: why it is not used)."""
    where = store.location.describe()
    try:
        data = store.load_artifact(INDEX_ARTIFACT)
    except OSError as error:
        log.warning("%s: cannot read the saved entity index (%s); building it", where, error)
        return None
    if data is None:
        log.info(
            "%s has no saved entity index (ingested by an older foretab); building it. "
            "Re-run `foretab ingest` to save one and open faster",
            where,
        )
        return None
    try:
        return read_index(data, store.generation)
    except IndexFileError as error:
        log.warning("%s: the saved entity index is not used: %s; building it", where, error)
        return None
