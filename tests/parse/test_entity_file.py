"""The entity index saved with the store (issue 27, cold start): used, checked, never trusted.

Ingest saves the index as ``entity_index.npz`` (numpy arrays only); an engine opening the
store loads it instead of normalising every project name. A missing, stale (another
ingest, other index code), damaged or crafted file is not used: the index is built as
before and the answers are the same.
"""

from __future__ import annotations

import io
import logging
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import foretab.parse.entities as entities_module
from foretab.core.months import Month
from foretab.engine.context import StoreContext
from foretab.errors import ForetabError
from foretab.parse.entities import EntityIndex
from foretab.parse.entity_build import IndexArrays, build_arrays
from foretab.parse.entity_file import (
    INDEX_ARTIFACT,
    IndexFileError,
    index_bytes,
    load_entity_index,
    read_index,
)
from foretab.parse.keytable import KeyTable, KeyTableError
from foretab.store import open_history
from foretab.store.catalog import EntityEntry
from tests.conftest import MINI_CSV, MINI_REFERENCE_MONTH

QUESTIONS = [
    "Vanke Feicui Gongyuan in Jiangning, Nanjing",
    "vanke feicui gongyuan in jiangning district",
    "Wan He Guanggu in Wuhan's East Lake High-tech Zone",
    "Vanke Daduhui Homeland in Bao'an District, Shenzhen City",
    "Poly Tianhui in Shanghai",
    "Poly Tianhui",
    "Tongzhou Wanguo City MOM in Tongzhou, Beijing",
    "Xiangjiang Villa in Changping, Beijing",
    "Xiangjiang Vila in Changping, Beijing",
    "Vanke Zuoan or Vanke Dajia in Industrial Park",
    "Which project in Jiangning will rise most next year?",
    "Crystal Palace in Pudong",
    "万科翡翠公园下个月的均价是多少？",
    "南京江宁区的万科翡翠公园",
    "上海市浦东新区房价最高的小区",
    "What is the price of Zhengrongyuelongfu?",
]


def _outcome(index: EntityIndex, question: str) -> object:
    try:
        linked = index.link(question)
    except ForetabError as error:
        return (type(error).__name__, error.message, tuple(error.suggestions))
    return linked


def test_a_loaded_index_links_as_the_built_one(corpus_index: EntityIndex) -> None:
    # The built index's arrays through the file and back (the real corpus's 5,634 projects).
    loaded = EntityIndex.of_arrays(read_index(index_bytes(corpus_index.arrays, "g1"), "g1"))
    assert list(loaded.refs) == list(corpus_index.refs)
    # Both segment Chinese with the same words (the keys checked above); jieba is slow to
    # set up, so the loaded index borrows the built one's.
    loaded.segmenter = corpus_index.segmenter
    for question in QUESTIONS:
        assert _outcome(loaded, question) == _outcome(corpus_index, question), question
    assert loaded.in_scope("Nanjing", "Jiangning District") == corpus_index.in_scope(
        "Nanjing", "Jiangning District"
    )
    assert loaded.places_named("江宁") == corpus_index.places_named("江宁")


def test_entities_come_back_as_they_went_in(corpus_entries: list[EntityEntry]) -> None:
    odd = EntityEntry(
        "A", "B", "Long " * 20 + "Name", Month(2019, 1), Month(2021, 12), 3, ("x", "y")
    )
    some = [*corpus_entries[:50], odd]
    index = EntityIndex.of_arrays(read_index(index_bytes(build_arrays(some), None), None))
    assert list(index.entries) == some
    assert index.link("long long long long long long long long long long long long name").entities


# -- with a store -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def store_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    from foretab.store.ingest import ingest_path

    db = str(tmp_path_factory.mktemp("index") / "mini.duckdb")
    ingest_path(MINI_CSV, db, Month.parse(MINI_REFERENCE_MONTH))
    return db


@pytest.fixture
def saved(store_db: str) -> Iterator[Path]:
    """The store's saved index file, put back as ingest wrote it after the test."""
    with open_history(store_db) as store:
        path = store.location.artifacts_dir / INDEX_ARTIFACT
    original = path.read_bytes()
    yield path
    path.write_bytes(original)


def _no_building(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: object) -> None:
        raise AssertionError("the index was built, not loaded")

    monkeypatch.setattr(entities_module, "build_arrays", refuse)


def test_ingest_saves_the_index_and_the_engine_loads_it(
    mini_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_building(monkeypatch)  # DuckDB and PostgreSQL: the index is a store artifact
    context = StoreContext.open(mini_db)
    assert context.index.link("Bund Garden in Huangpu, Shanghai").entities[0].name == "Bund Garden"


def _answers(db: str) -> list[object]:
    context = StoreContext.open(db)
    return [
        _outcome(context.index, question)
        for question in (
            "What was the price of Bund Garden in Huangpu, Shanghai in March 2021?",
            "Which project in Huangpu, Shanghai was the cheapest in 2021?",
            "What was the price of Bund Gardn in Huangpu in March 2021?",
            "Bund Garden or Crystal Palace?",
        )
    ]


@pytest.fixture(scope="module")
def answers_with_index(store_db: str) -> list[object]:
    return _answers(store_db)


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        (lambda data: b"", "missing"),
        (lambda data: data[: len(data) // 2], "not an index file"),
        (lambda data: b"PK\x03\x04" + b"\x00" * 64, "not an index file"),
    ],
)
def test_a_missing_or_damaged_index_is_built_and_answers_the_same(
    store_db: str,
    saved: Path,
    damage: object,
    why: str,
    answers_with_index: list[object],
    caplog: pytest.LogCaptureFixture,
) -> None:
    data = damage(saved.read_bytes())  # type: ignore[operator]
    if data:
        saved.write_bytes(data)
    else:
        saved.unlink()
    with caplog.at_level(logging.INFO, logger="foretab.index"):
        after = _answers(store_db)
    assert after == answers_with_index
    assert (why if why != "missing" else "no saved entity index") in caplog.text


def test_an_index_of_another_ingest_is_not_used(
    store_db: str, saved: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with open_history(store_db) as store:
        entries = store.entities()
        saved.write_bytes(index_bytes(build_arrays(entries), "another-generation"))
        with caplog.at_level(logging.WARNING, logger="foretab.index"):
            assert load_entity_index(store) is None
    assert "another ingest" in caplog.text


def test_an_index_built_by_other_code_is_not_used(
    store_db: str, saved: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_history(store_db) as store:
        data = saved.read_bytes()
        assert read_index(data, store.generation) is not None
        monkeypatch.setattr("foretab.parse.entity_file.fingerprint", lambda: "edited")
        with pytest.raises(IndexFileError, match="another version"):
            read_index(data, store.generation)


class _Boom:
    ran = False

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (_Boom._run, ())

    @staticmethod
    def _run() -> None:
        _Boom.ran = True


def _npz(**arrays: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def test_a_crafted_file_runs_no_code() -> None:
    crafted = _npz(
        **{"meta.format": np.array([1], dtype=np.int32)},
        names=np.array([_Boom()], dtype=object),
    )
    with pytest.raises(IndexFileError, match="not an index file"):
        read_index(crafted, None)
    assert not _Boom.ran
    pickled = io.BytesIO()
    np.save(pickled, np.array([_Boom()], dtype=object), allow_pickle=True)
    with pytest.raises(IndexFileError):
        read_index(pickled.getvalue(), None)
    assert not _Boom.ran


def test_compressed_members_are_refused() -> None:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, a=np.zeros(10))
    with pytest.raises(IndexFileError, match="compressed"):
        read_index(buffer.getvalue(), None)
    with zipfile.ZipFile(io.BytesIO(_npz(a=np.zeros(3)))) as archive:
        assert all(i.compress_type == zipfile.ZIP_STORED for i in archive.infolist())


def _arrays(entries: list[EntityEntry]) -> dict[str, np.ndarray]:
    return build_arrays(entries).to_arrays()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda a: a.__setitem__("entity_keys.values", a["entity_keys.values"] + 10**6), "out of range"),
        (lambda a: a.__setitem__("by_inner.ids", a["by_inner.ids"].astype(np.int64)), "int32"),
        (lambda a: a.__setitem__("first_month", a["first_month"][:-1]), "lengths"),
        (lambda a: a.__setitem__("entity_keys.heads", a["entity_keys.heads"][::-1].copy()), "sorted"),
        (lambda a: a.__setitem__("names.text", np.frombuffer(b"\xff" * 8, np.uint8)), "offsets|UTF-8"),
        (lambda a: a.pop("cjk.tags"), "no array"),
        (lambda a: a.__setitem__("place_keys.tags", a["place_keys.tags"] + 7), "kind"),
    ],
)  # fmt: skip
def test_crafted_arrays_are_refused(
    corpus_entries: list[EntityEntry], edit: object, message: str
) -> None:
    arrays = _arrays(corpus_entries[:80])
    edit(arrays)  # type: ignore[operator]
    with pytest.raises(KeyTableError, match=message):
        IndexArrays.from_arrays(arrays)


def test_key_table_lookups() -> None:
    long = "a" * 40
    table = KeyTable.of(
        {"b c": [(0, 1)], "b": [(0, 2), (0, 3)], long: [(0, 4)], long + "b": [(1, 5)]}
    )
    assert table.ids("b") == [2, 3]
    assert table.get(long + "b") == [(1, 5)]
    assert table.ids(long) == [4] and table.ids("a" * 39) is None
    assert table.has_word_prefix("b") and not table.has_word_prefix("b c d")
    assert table.has_prefix("b ") and table.has_prefix("a" * 35) and not table.has_prefix("c")
    assert table.ids("zz") is None and not table.has_prefix("")


def test_the_model_source_reads_last_months_on_demand(mini_duckdb: str) -> None:
    from foretab.core.plan import EntityRef
    from foretab.forecast.source import _StoreLastSeen

    with open_history(mini_duckdb) as store:
        seen = _StoreLastSeen(store)
        entry = store.entities()[0]
        ref = EntityRef(entry.outer, entry.inner, entry.name)
        assert seen.get(ref) == entry.last_month
        assert seen.get(EntityRef(entry.outer, entry.inner, "Nowhere")) is None


@pytest.mark.slow
def test_a_predict_only_process_imports_lightgbm_without_scikit_learn() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from foretab.forecast import lightgbm_import as li\n"
        "li.import_for_prediction()\n"
        "assert 'lightgbm' not in sys.modules  # not declared predict-only: nothing done\n"
        "li.predict_only_process()\n"
        "li.import_for_prediction()\n"
        "import lightgbm, sklearn\n"
        "print(lightgbm.compat.SKLEARN_INSTALLED, sklearn.__name__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.split() == ["False", "sklearn"]
