"""Entity linking: the cities, districts and projects a question mentions.

Two stages, both over normalised tokens (``foretab.parse.text``):

1. **exact** — every token n-gram is looked up in tables of normalised names (and of
   names with the spaces removed, for "Zhengrong Yuelongfu" vs "Zhengrongyuelongfu");
   the longest non-overlapping hits win, so "Jiangning Jinmaoyue" is a project while
   "Jiangning District" is a place. O(question length), no fuzzy scoring. The tables
   (``foretab.parse.keytable``) are built at ingest and saved with the store.
2. **fuzzy** — words left over (not a place, not a project, not question vocabulary, not
   the time expression) are scored with rapidfuzz against the projects in scope (the
   districts / cities named), so typos and partial names ("Xiangjiang Villa" for
   "Xiangjiang Villa Phase 2") still resolve. A clear winner is taken; a near tie raises
   ``AmbiguousEntityError``; a capitalised name that matches nothing raises
   ``UnknownEntityError`` with the closest names. Nothing is guessed silently.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from rapidfuzz import fuzz, process

from foretab.core.months import Month
from foretab.core.plan import EntityRef, Wording, default_wording
from foretab.errors import AmbiguousEntityError, UnknownEntityError
from foretab.parse.entity_build import (
    ENTITY,
    INNER,
    OUTER,
    IndexArrays,
    build_arrays,
    place_keys,
    zh_alias,
)
from foretab.parse.keytable import KeyTable
from foretab.parse.question import Question, Segmenter
from foretab.parse.text import Token, has_cjk, normalize, tokenize
from foretab.parse.vocabulary import (
    FILLER_ZH,
    QUESTION_WORDS,
    SCOPE_WORDS,
    ZH_WORDS,
)
from foretab.store.catalog import EntityEntry

_PLACE_TYPO = 85.0  # a leftover this close to a city / district name is that place, misspelt
_FUZZY_ACCEPT = 88.0  # a leftover span scoring this high against one project links to it
_FUZZY_SUGGEST = 60.0  # names scoring this high are offered as "did you mean"
_FUZZY_MARGIN = 3.0  # the winner must beat the runner-up (another project) by this much
_MAX_NAME_WORDS = 16  # a Chinese name is at most this many jieba words (with punctuation)
_BREAK = re.compile(r"[,;:?!()\[\]/&]|\s-\s")


def spelt_within(text: str, name: str) -> bool:
    """True when ``text`` is ``name`` or a part of it, up to case, spaces and punctuation.

    "Lixiang City" and "Sun and Moon" (for "Sun & Moon") are; "Lixang" is a misspelling.
    """
    return _loose(text) in _loose(name)


def _loose(name: str) -> str:
    return re.sub(r"\band\b|[^0-9a-z\u4e00-\u9fff]", "", normalize(name))


class MentionKind(StrEnum):
    """What a span of the question names."""

    ENTITY = "entity"
    INNER = "inner"
    OUTER = "outer"


@dataclass(frozen=True, slots=True)
class Mention:
    """A span of the question that names catalog entities (ids into the index)."""

    kind: MentionKind
    start: int
    end: int
    text: str
    ids: tuple[int, ...]  # project ids, or place ids for districts / cities
    also_place: tuple[int, ...] = ()  # a project name that is also a district / city name
    also_place_kind: MentionKind | None = None


@dataclass(frozen=True, slots=True)
class Linked:
    """The entities found in a question, projects in the order they were mentioned."""

    entities: tuple[EntityRef, ...]
    outers: tuple[str, ...]
    inners: tuple[tuple[str, str], ...]  # (city, district)
    spans: tuple[tuple[int, int], ...]  # every entity span, for masking


_KINDS = {ENTITY: MentionKind.ENTITY, INNER: MentionKind.INNER, OUTER: MentionKind.OUTER}


class _Lazy(Sequence[Any]):
    """The index's entities as a sequence, each made when it is read (not 500,000 at open)."""

    def __init__(self, make: Callable[[int], Any], size: int) -> None:
        self._make, self._size = make, size
        self._made: dict[int, Any] = {}  # kept, as the tuple of every entity was

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._size))]
        if not -self._size <= i < self._size:
            raise IndexError(i)
        i %= self._size
        made = self._made.get(i)
        if made is None:
            made = self._made[i] = self._make(i)
        return made

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(self._size))


@dataclass(slots=True)
class _Scope:
    keys: list[str] = field(default_factory=list)
    ids: list[int] = field(default_factory=list)


class EntityIndex:
    """Link a question in ~1 ms against a store's entities.

    ``EntityIndex(entries)`` builds the index (seconds per 100,000 entities);
    ``EntityIndex.of_arrays`` takes one built before (ingest saves it with the store:
    ``foretab.parse.entity_file``). Both link through the same arrays.
    """

    def __init__(
        self,
        entries: Sequence[EntityEntry],
        words: Sequence[str] = (),
        wording: Wording | None = None,
    ) -> None:
        # ``wording``: what the corpus schema calls its levels ("project", "stock"), for messages.
        self._attach(build_arrays(tuple(entries)), words, wording)

    @classmethod
    def of_arrays(
        cls, arrays: IndexArrays, words: Sequence[str] = (), wording: Wording | None = None
    ) -> EntityIndex:
        """The index over ``arrays`` (from ``build_arrays`` or a saved index file)."""
        index = cls.__new__(cls)
        index._attach(arrays, words, wording)
        return index

    def _attach(self, arrays: IndexArrays, words: Sequence[str], wording: Wording | None) -> None:
        self.arrays = arrays
        self.wording = wording or default_wording()
        self.noun = self.wording.entity
        self.outers: list[str] = [arrays.outers[i] for i in range(len(arrays.outers))]
        self.inners: list[tuple[str, str]] = [
            (self.outers[o], arrays.inners[i]) for i, o in enumerate(arrays.inner_outer.tolist())
        ]
        self.outer_zh = {o: arrays.outer_zh[i] for i, o in enumerate(self.outers)}
        self.inner_zh = {p: arrays.inner_zh[i] for i, p in enumerate(self.inners)}
        self._outer_ids = {o: i for i, o in enumerate(self.outers)}
        self._inner_ids = {p: i for i, p in enumerate(self.inners)}
        self.entries: Sequence[EntityEntry] = _Lazy(self.entry, len(arrays))
        self.refs: Sequence[EntityRef] = _Lazy(self.ref, len(arrays))
        self._entity_keys = arrays.entity_keys
        self._compact_keys = arrays.compact_keys
        self._place_keys = arrays.place_keys
        self._place_compact = arrays.place_compact
        self._cjk = arrays.cjk
        self._scopes: dict[tuple[int, ...], _Scope] = {}
        self._place_name_list: list[str] | None = None
        # Chinese questions are segmented with the corpus's names kept whole.
        # ``words``: the corpus schema's own (level and measure words, "股价").
        extra = tuple(words)
        self.segmenter = Segmenter(lambda: [*arrays.cjk.key_list(), *ZH_WORDS, *FILLER_ZH, *extra])

    # -- the arrays, read as the index's lists and maps ----------------------------------

    def entry(self, pid: int) -> EntityEntry:
        """Entity ``pid`` as the catalog gave it."""
        a = self.arrays
        outer, inner = self.inners[int(a.inner_id[pid])]
        return EntityEntry(
            outer=outer,
            inner=inner,
            name=a.names[pid],
            first_month=Month.from_index(int(a.first_month[pid])),
            last_month=Month.from_index(int(a.last_month[pid])),
            n_months=int(a.n_months[pid]),
            aliases=a.aliases[pid],
            outer_aliases=a.outer_aliases[pid],
            inner_aliases=a.inner_aliases[pid],
        )

    def ref(self, pid: int) -> EntityRef:
        """Entity ``pid`` as plans name it."""
        a = self.arrays
        outer, inner = self.inners[int(a.inner_id[pid])]
        return EntityRef(outer, inner, a.names[pid], zh_alias(a.aliases[pid]))

    def _normal(self, pid: int) -> str:
        return self.arrays.normal[pid]

    def _outer_pids(self, outer: str) -> list[int]:
        i = self._outer_ids.get(outer)
        return [] if i is None else self.arrays.by_outer[i]

    def _inner_pids(self, place: tuple[str, str]) -> list[int]:
        i = self._inner_ids.get(place)
        return [] if i is None else self.arrays.by_inner[i]

    def _cjk_get(self, text: str) -> tuple[MentionKind, list[int]] | None:
        hit = self._cjk.get(text)
        return None if hit is None else (_KINDS[hit[0][0]], [i for _, i in hit])

    def _places_get(self, table: KeyTable, key: str) -> list[tuple[MentionKind, int]] | None:
        hit = table.get(key)
        return None if hit is None else [(_KINDS[tag], i) for tag, i in hit]

    def _spaced_prefix(self, key: str) -> bool:
        """Some name (a project's or a place's) is ``key`` or starts with its words."""
        return self._entity_keys.has_word_prefix(key) or self._place_keys.has_word_prefix(key)

    def _compact_prefix(self, compact: str) -> bool:
        return self._compact_keys.has_prefix(compact) or self._place_compact.has_prefix(compact)

    @property
    def _place_names(self) -> list[str]:
        """Place keys of at least five characters, sorted: what a misspelt place is read as."""
        if self._place_name_list is None:
            self._place_name_list = [k for k in self._place_keys.key_list() if len(k) >= 5]
        return self._place_name_list

    def places_named(self, text: str) -> tuple[list[str], list[tuple[str, str]]]:
        """Cities and (city, district) pairs a short or full place name means.

        The same forms questions accept: "Jiangning", "jiangning district", "Baoan",
        "江宁区", "Pudong New Area"; an empty result when nothing matches.
        """
        key = normalize(text)
        hits = (
            self._places_get(self._place_keys, key)
            or self._places_get(self._place_compact, key.replace(" ", ""))
            or []
        )
        outers = [self.outers[i] for kind, i in hits if kind is MentionKind.OUTER]
        inners = [self.inners[i] for kind, i in hits if kind is MentionKind.INNER]
        cjk = self._cjk_get(text.strip())
        if cjk is not None and cjk[0] is MentionKind.OUTER:
            outers += [self.outers[i] for i in cjk[1]]
        elif cjk is not None and cjk[0] is MentionKind.INNER:
            inners += [self.inners[i] for i in cjk[1]]
        return outers, inners

    def in_scope(self, outer: str, inner: str | None) -> list[tuple[EntityRef, EntityEntry]]:
        """The scope's projects with their catalog entries, in catalog order."""
        ids = self._outer_pids(outer) if inner is None else self._inner_pids((outer, inner))
        return [(self.refs[i], self.entries[i]) for i in sorted(ids)]

    def close_zh_names(self, word: str, mention: Mention, limit: int = 3) -> list[str]:
        """Chinese names inside the place ``mention`` names that ``word`` may be a typo of.

        Character similarity (rapidfuzz): "绿地里想城" → 绿地理想城.
        """
        refs: list[EntityRef] = []
        for place_id in mention.ids:
            if mention.kind is MentionKind.INNER:
                outer, inner = self.inners[place_id]
                refs += [ref for ref, _ in self.in_scope(outer, inner)]
            elif mention.kind is MentionKind.OUTER:
                refs += [ref for ref, _ in self.in_scope(self.outers[place_id], None)]
        names = list(dict.fromkeys(ref.name_zh for ref in refs if ref.name_zh))
        hits = process.extract(word, names, scorer=fuzz.partial_ratio, limit=limit, score_cutoff=60)
        return [names[index] for _, _, index in hits]

    # -- stage 1: exact n-grams ---------------------------------------------------------

    def find_mentions(self, question: str, *, read: Question | None = None) -> list[Mention]:
        """Exact (normalised) mentions of projects, districts and cities, in text order.

        ``read``: the question already tokenised (``parse.question``), reused as it is.
        """
        tokens = read.tokens if read is not None else tokenize(question)
        candidates: list[tuple[int, int, Mention]] = []
        for i in range(len(tokens)):
            key, compact = "", ""
            spaced_open, compact_open = True, True
            for length in range(1, len(tokens) - i + 1):
                word = tokens[i + length - 1].text
                key = f"{key} {word}" if key else word
                compact += word
                spaced_open = spaced_open and self._spaced_prefix(key)
                compact_open = compact_open and self._compact_prefix(compact)
                if not spaced_open and not compact_open:
                    break
                pids = self._entity_keys.ids(key) if spaced_open else None
                if pids is None and length > 1 and compact_open:
                    pids = self._compact_keys.ids(compact)
                places = self._places_get(self._place_keys, key) if spaced_open else None
                if places is None and length > 1 and compact_open:
                    places = self._places_get(self._place_compact, compact)
                if pids is None and places is None:
                    continue
                if length == 1 and key in QUESTION_WORDS and places is None:
                    continue  # a one-word project named like a question word ("Rise")
                mention = self._mention(question, tokens[i : i + length], pids, places)
                candidates.append((i, length, mention))
        if has_cjk(question):
            candidates += self._cjk_mentions(question, read)
        # Longest first, then leftmost; keep the ones that do not overlap a chosen one.
        chosen: list[Mention] = []
        taken: list[tuple[int, int]] = []
        for _, _, mention in sorted(candidates, key=lambda c: (-(c[2].end - c[2].start), c[0])):
            if any(mention.start < end and start < mention.end for start, end in taken):
                continue
            chosen.append(mention)
            taken.append((mention.start, mention.end))
        return sorted(chosen, key=lambda m: m.start)

    def _mention(
        self,
        question: str,
        tokens: Sequence[Token],
        pids: list[int] | None,
        places: list[tuple[MentionKind, int]] | None,
    ) -> Mention:
        start, end = tokens[0].start, tokens[-1].end
        text = question[start:end]
        if pids is not None:
            place_kind = places[0][0] if places else None
            # Only ids of that kind: a name that is a city and a district as well (at 100x
            # the corpus some are) mixed district ids into the city ids (IndexError).
            place_ids = tuple(pid for k, pid in places or () if k == place_kind)
            return Mention(MentionKind.ENTITY, start, end, text, tuple(pids), place_ids, place_kind)
        assert places is not None
        # A name that is both a city and a district ("Suzhou"?) counts as the city.
        kinds = {kind for kind, _ in places}
        kind = MentionKind.OUTER if MentionKind.OUTER in kinds else MentionKind.INNER
        return Mention(kind, start, end, text, tuple(pid for k, pid in places if k == kind))

    def _cjk_mentions(self, question: str, read: Question | None) -> list[tuple[int, int, Mention]]:
        """Chinese names: runs of jieba words (the names are its user words) in the index.

        A run of several words also matches, for a name jieba splits ("瑚璟花园" as 瑚 / 璟
        / 花园 when the question spells it inside a longer word).
        """
        segments = read.segments if read is not None and read.zh else self.segmenter.cut(question)
        found = []
        for i in range(len(segments)):
            text = ""
            for segment in segments[i : i + _MAX_NAME_WORDS]:
                text += segment.text
                hit = self._cjk_get(text)
                if hit is not None and len(text) >= 2:
                    start = segments[i].start
                    mention = Mention(hit[0], start, segment.end, text, tuple(hit[1]))
                    found.append((start, len(text), mention))
        return found

    # -- stage 2: resolve, with fuzzy matching of leftovers ------------------------------

    def link(self, question: str, ignore: Sequence[tuple[int, int]] = ()) -> Linked:
        """Find and resolve every entity of ``question``.

        Spans in ``ignore`` (the time expression) are not read as names.
        """
        return self.resolve(question, self.find_mentions(question), ignore)

    def resolve(
        self,
        question: str,
        mentions: Sequence[Mention],
        ignore: Sequence[tuple[int, int]] = (),
        *,
        allow_no_entity: bool = False,
        every_outer: bool = False,
        read: Question | None = None,
    ) -> Linked:
        """Turn exact mentions plus fuzzy leftovers into projects, in question order.

        ``allow_no_entity``: a question about a district or city as a whole names no
        project; return the places instead of refusing. ``every_outer``: the question ranks
        the outer level ("which city"); with no name in it, every outer group is its subject.
        """
        has_other_entity = sum(1 for m in mentions if m.kind is MentionKind.ENTITY) > 1
        entity_mentions: list[Mention] = []
        outers: list[int] = []
        inners: list[int] = []
        for mention in mentions:
            if mention.kind is MentionKind.ENTITY and mention.also_place and has_other_entity:
                # "Xihu" is a project and a district: with another project named, a place.
                mention = Mention(
                    mention.also_place_kind or MentionKind.INNER,
                    mention.start,
                    mention.end,
                    mention.text,
                    mention.also_place,
                )
            if mention.kind is MentionKind.ENTITY:
                entity_mentions.append(mention)
            elif mention.kind is MentionKind.OUTER:
                outers.extend(mention.ids)
            else:
                inners.extend(mention.ids)
        outer_names = sorted({self.outers[i] for i in outers})
        places = [self.inners[i] for i in inners]
        if outer_names:
            in_outer = [p for p in places if p[0] in outer_names]
            # "Huangpu, Guangzhou": the city picks the district; a district outside every
            # named city is still kept (questions may span cities).
            places = in_outer or places
        place_set = sorted(set(places))
        scope_ids = self._scope_ids(outer_names, place_set)

        spans = [(m.start, m.end) for m in mentions]
        resolved: list[tuple[int, int]] = []  # (position, project id)
        # A name that exists only outside the named places may be a piece of a longer,
        # misspelt name in scope: let the fuzzy stage read it before reporting it.
        deferred: list[tuple[Mention, UnknownEntityError]] = []
        resolved_mentions: list[Mention] = []
        # An ambiguous name is reported after the leftovers are read: an unknown word there
        # ("Vanke City in Chengdu") is the more basic problem and names what to fix.
        ambiguous: list[AmbiguousEntityError] = []
        for mention in entity_mentions:
            try:
                pid = self._pick(mention, scope_ids, outer_names, place_set)
            except UnknownEntityError as error:
                deferred.append((mention, error))
                continue
            except AmbiguousEntityError as error:
                ambiguous.append(error)
                continue
            resolved.append((mention.start, pid))
            resolved_mentions.append(mention)
        deferred_spans = {(m.start, m.end) for m, _ in deferred}
        taken = [*(span for span in spans if span not in deferred_spans), *ignore]
        keys = self._scope(scope_ids).keys
        exact = [(m, pid) for m, (_, pid) in zip(resolved_mentions, resolved, strict=True)]
        unclaimed: list[str] = []  # leftovers that named nothing
        misspelt_places: list[str] = []
        tokens = read.tokens if read is not None else tokenize(question)
        for start, end, text, name_like in self._leftovers(question, tokens, taken, keys):
            self._check_extension(question, start, end, exact, scope_ids)
            errors = [e for m, e in deferred if start <= m.start and m.end <= end]
            if not errors and self._misspelt_place(text):
                spans.append((start, end))  # claimed as a place
                misspelt_places.append(question[start:end])
                continue  # "Jiangnig, Nanjng": a place name with a typo, not a project
            try:
                pid = self._fuzzy(
                    text,
                    question[start:end],
                    name_like or bool(errors),
                    scope_ids,
                    outer_names,
                    place_set,
                )
            except UnknownEntityError:
                if errors:
                    raise errors[0] from None
                raise
            if pid is None and errors:
                raise errors[0]
            if pid is not None:
                resolved.append((start, pid))
                spans.append((start, end))
            elif (set(text.split()) - SCOPE_WORDS) and (name_like or " " in text):
                # A lone lowercase word ("spread") is not read as a name: the leftover
                # pass refuses it as a word the plan did not consume.
                unclaimed.append(question[start:end])
        if ambiguous:
            raise ambiguous[0]
        if misspelt_places and not resolved:
            # Beside a project named exactly, a misspelt place only qualifies it; as the
            # subject it would be dropped and the question answered for another place.
            raise self._misspelt_place_error(misspelt_places[0])
        if not resolved and allow_no_entity and every_outer and not (outer_names or place_set):
            outer_names = list(self.outers)  # "which city is the most expensive?": all of them
        if not resolved and allow_no_entity and (outer_names or place_set):
            # A question about a place as a whole names no project; words left over that
            # are not question vocabulary may be a project the store does not know
            # ("sunshine towers in jiangning"): refuse rather than answer for the district.
            if unclaimed:
                where = self._where(outer_names, place_set)
                raise UnknownEntityError(
                    f"unknown {self.noun} '{unclaimed[0]}'{where}: no {self.noun} of that "
                    f"name; `foretab projects --db DB --search TEXT` finds {self.wording.entities} "
                    "by name",
                    suggestions=self._suggest(unclaimed[0], scope_ids),
                )
            return Linked((), tuple(outer_names), tuple(place_set), tuple(sorted(spans)))
        if not resolved:
            where = self._where(outer_names, place_set)
            raise UnknownEntityError(
                f"no {self.noun}{where} is named in the question {question!r}; "
                "name one as it appears in the store (`foretab projects --db DB` lists them; "
                "`foretab tables --db DB` lists the tables and years)",
                suggestions=self._suggest(question, scope_ids),
            )
        ordered: list[EntityRef] = []
        for _, pid in sorted(resolved):
            if self.refs[pid] not in ordered:
                ordered.append(self.refs[pid])
        return Linked(
            tuple(ordered),
            tuple(outer_names),
            tuple(place_set),
            tuple(sorted(spans)),
        )

    def _check_extension(
        self,
        question: str,
        start: int,
        end: int,
        exact: Sequence[tuple[Mention, int]],
        scope_ids: list[int] | None,
    ) -> None:
        """Refuse an exact name that runs straight into unknown words spelling another one.

        "He Jinhua Chen yuejign" holds the project "He Jinhua Chen" but reads as a typo of
        "He Jinhua Chen Yuejing": ask rather than pick.
        """
        for mention, pid in exact:
            touching = mention.end <= start and not question[mention.end : start].strip()
            touching = touching or (
                end <= mention.start and not question[end : mention.start].strip()
            )
            if not touching:
                continue
            joined = normalize(question[min(start, mention.start) : max(end, mention.end)])
            hit = process.extractOne(
                joined, self._scope(scope_ids).keys, scorer=fuzz.WRatio, score_cutoff=_FUZZY_ACCEPT
            )
            if hit is None:
                continue
            other = self._scope(scope_ids).ids[hit[2]]
            if other != pid and self._normal(other) != self._normal(pid):
                options = [self._label(pid), self._label(other)]
                raise AmbiguousEntityError(
                    f"'{question[min(start, mention.start) : max(end, mention.end)]}' could be "
                    f"{' or '.join(options)}; use the full {self.noun} name",
                    suggestions=options,
                )

    def _misspelt_place(self, text: str) -> bool:
        """True when ``text`` is a close misspelling of a city or district name.

        Whole run first ("east lake hi tec zone"), then word by word ("jiangnig nanjng");
        strict character similarity, so a project name is never read as a place.
        """
        if len(text) < 5:
            return False
        if process.extractOne(text, self._place_names, scorer=fuzz.ratio, score_cutoff=_PLACE_TYPO):
            return True
        words = [w for w in text.split(" ") if w not in QUESTION_WORDS]
        return bool(words) and all(
            len(word) >= 5
            and process.extractOne(
                word, self._place_names, scorer=fuzz.ratio, score_cutoff=_PLACE_TYPO
            )
            is not None
            for word in words
        )

    def _glued_to_own_places(self, original: str, pid: int) -> bool:
        """The exact name with its own city, district and a date glued on: no misspelling.

        Mixed-script questions glue them to the name ("ShanghaiHuangpu DistrictBund
        Garden2021年1月", "上海黄浦区Bund Garden2021年"); no letter of the name is guessed.
        """
        entry = self.entries[pid]
        text, name = _loose(original), _loose(entry.name)
        if len(name) < 3 or name not in text:
            return False
        own = {
            *place_keys(entry.outer, entry.outer_aliases),
            *place_keys(entry.inner, entry.inner_aliases),
            *entry.outer_aliases,
            *entry.inner_aliases,
        }
        rest = text.replace(name, " ", 1)
        for word in sorted({_loose(w) for w in own} - {""}, key=len, reverse=True):
            rest = rest.replace(word, " ")
        return re.fullmatch(r"[\s0-9年月日]*", rest) is not None

    def _misspelt_place_error(self, text: str) -> UnknownEntityError:
        hit = process.extractOne(normalize(text), self._place_names, scorer=fuzz.ratio)
        close = f"; did you mean {hit[0].title()}?" if hit is not None else ""
        return UnknownEntityError(
            f"unknown {' or '.join(self.wording.groups)} '{text}'{close}",
            suggestions=[hit[0].title()] if hit is not None else [],
        )

    def _scope_ids(
        self, outer_names: Sequence[str], places: Sequence[tuple[str, str]]
    ) -> list[int] | None:
        if places:
            return [pid for place in places for pid in self._inner_pids(place)]
        if outer_names:
            return [pid for outer in outer_names for pid in self._outer_pids(outer)]
        return None

    def _label(self, pid: int) -> str:
        ref = self.refs[pid]
        place = ", ".join(part for part in (ref.inner, ref.outer) if part)
        return f"{ref.name} ({place})" if place else ref.name

    @staticmethod
    def _where(outer_names: Sequence[str], places: Sequence[tuple[str, str]]) -> str:
        if places:
            return " in " + " or ".join(f"{d}, {c}" for c, d in places)
        if outer_names:
            return " in " + " or ".join(outer_names)
        return ""

    def _pick(
        self,
        mention: Mention,
        scope_ids: list[int] | None,
        outer_names: Sequence[str],
        places: Sequence[tuple[str, str]],
    ) -> int:
        ids = list(mention.ids)
        if scope_ids is not None:
            scope = set(scope_ids)
            in_scope = [pid for pid in ids if pid in scope]
            if not in_scope:
                where = self._where(outer_names, places)
                raise UnknownEntityError(
                    f"{self.noun} '{mention.text}' is not{where}; "
                    f"it exists in {', '.join(self._label(p) for p in ids[:5])}: "
                    f"name the right {' or '.join(self.wording.groups)}",
                    suggestions=[self._label(p) for p in ids[:5]],
                )
            ids = in_scope
        if len(ids) > 1:
            raise AmbiguousEntityError(
                f"{self.noun} '{mention.text}' exists in several places: "
                f"{', '.join(self._label(p) for p in ids[:6])}; "
                f"add its {' and '.join(self.wording.groups)}",
                suggestions=[self._label(p) for p in ids[:6]],
                mention=mention.text,
                start=mention.start,
                end=mention.end,
                candidates=[self.refs[p] for p in ids],
            )
        return ids[0]

    def _leftovers(
        self,
        question: str,
        tokens: Sequence[Token],
        taken: Sequence[tuple[int, int]],
        keys: Sequence[str],
    ) -> list[tuple[int, int, str, bool]]:
        """Runs of words that are neither entities, time, nor question vocabulary.

        Two runs separated only by one or two question words ("Zhujiang Yicheng I Yue
        Garden", where "i" is a question word) are also offered joined, and the joined run
        wins when it matches a name at least as well as its parts.
        """
        runs: list[tuple[int, int]] = []  # token index ranges [first, last]
        first = -1
        previous_end = 0
        inside_at: set[int] = set()
        for position, token in enumerate(tokens):
            inside = any(start <= token.start and token.end <= end for start, end in taken)
            if inside:
                inside_at.add(position)
            stop = inside or token.text in QUESTION_WORDS
            hard = inside or bool(_BREAK.search(question[previous_end : token.start]))
            if first >= 0 and (stop or hard):
                runs.append((first, position - 1))
                first = -1
            if not stop and first < 0:
                first = position
            previous_end = token.end
        if first >= 0:
            runs.append((first, len(tokens) - 1))
        merged: list[tuple[int, int]] = []
        for start, end in runs:
            joinable = (
                not inside_at.intersection(range(merged[-1][1] + 1, start)) if merged else False
            )
            if joinable and self._joinable(tokens, question, merged[-1], (start, end), keys):
                merged[-1] = (merged[-1][0], end)
            else:
                merged.append((start, end))
        leftovers = []
        for start, end in merged:
            run = tokens[start : end + 1]
            text = " ".join(t.text for t in run)
            if len(text.replace(" ", "")) < 3 or all(t.text.isdigit() for t in run):
                continue
            # Sentence-initial capitals say nothing; later capitals mark a name.
            name_like = any(t.capitalized and t.start > 0 for t in run)
            leftovers.append((run[0].start, run[-1].end, text, name_like))
        return leftovers

    def _joinable(
        self,
        tokens: Sequence[Token],
        question: str,
        left: tuple[int, int],
        right: tuple[int, int],
        keys: Sequence[str],
    ) -> bool:
        gap = tokens[left[1] + 1 : right[0]]
        if not 1 <= len(gap) <= 2:
            return False
        if _BREAK.search(question[tokens[left[1]].end : tokens[right[0]].start]):
            return False
        parts = [" ".join(t.text for t in tokens[a : b + 1]) for a, b in (left, right)]
        joined = " ".join(t.text for t in tokens[left[0] : right[1] + 1])
        best_joined = process.extractOne(joined, keys, scorer=fuzz.WRatio)
        if best_joined is None or best_joined[1] < _FUZZY_ACCEPT:
            return False
        best_parts = [process.extractOne(part, keys, scorer=fuzz.WRatio) for part in parts]
        return all(hit is None or best_joined[1] >= hit[1] for hit in best_parts)

    def _scope(self, scope_ids: list[int] | None) -> _Scope:
        key = tuple(scope_ids) if scope_ids is not None else (-1,)
        scope = self._scopes.get(key)
        if scope is None:
            ids = scope_ids if scope_ids is not None else list(range(len(self.entries)))
            scope = _Scope([self._normal(i) for i in ids], list(ids))
            if len(self._scopes) < 512:
                self._scopes[key] = scope
        return scope

    def _fuzzy(
        self,
        text: str,
        original: str,
        name_like: bool,
        scope_ids: list[int] | None,
        outer_names: Sequence[str],
        places: Sequence[tuple[str, str]],
    ) -> int | None:
        scope = self._scope(scope_ids)
        hits = process.extract(
            text, scope.keys, scorer=fuzz.WRatio, limit=6, score_cutoff=_FUZZY_ACCEPT - 1
        )
        ranked = [(score, scope.ids[index]) for _, score, index in hits]
        # A fragment much shorter than the name ("City" in "Shentie Jing City") is a
        # suggestion at most, never a link.
        accept = [(s, p) for s, p in ranked if len(text) >= 0.6 * len(self._normal(p))]
        if accept and accept[0][0] >= _FUZZY_ACCEPT:
            ranked = accept
            best_score, best = ranked[0]
            rivals = [
                pid
                for score, pid in ranked[1:]
                if score >= best_score - _FUZZY_MARGIN and self._normal(pid) != text
            ]
            if (
                self._normal(best) == text
                and len([p for s, p in ranked if self._normal(p) == text]) == 1
            ):
                rivals = []
            if rivals:
                options = [self._label(p) for p in [best, *rivals]]
                raise AmbiguousEntityError(
                    f"'{original}' could be {', '.join(options)}; use the full {self.noun} name",
                    suggestions=options,
                )
            if not spelt_within(original, self.refs[best].name) and not self._glued_to_own_places(
                original, best
            ):
                # A misspelling ("Lixang" for Lixiang) is a guess at another name: asked
                # back, never answered (docs/design.md §2); a part of the name links.
                where = self._where(outer_names, places)
                raise UnknownEntityError(
                    f"unknown {self.noun} '{original}'{where}; did you mean {self._label(best)}?",
                    suggestions=[self._label(best)],
                )
            return best
        if not name_like or (" " not in text and len(text) <= 4):
            # Ordinary words, or a lone short acronym ("SIP", "CBD"), are not names; a
            # question left with no project at all still fails in ``resolve``.
            return None
        hits = process.extract(text, scope.keys, scorer=fuzz.WRatio, limit=3)
        ranked = [(score, scope.ids[index]) for _, score, index in hits]
        where = self._where(outer_names, places)
        suggestions = [self._label(pid) for _, pid in ranked[:3]]
        hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
        # A lone word is as likely a city or district outside the catalog ("Chengdu").
        kind, outers = self.noun, ""
        if " " not in text and self.wording.groups:
            kind = self.wording.named_levels
            outers = (
                f" (the catalog's {self.wording.groups_plural[-1]}: "
                f"{', '.join(sorted(self.outers))})"
            )
        raise UnknownEntityError(
            f"unknown {kind} '{original}'{where}{hint}{outers}",
            suggestions=suggestions,
        )

    def _suggest(self, question: str, scope_ids: list[int] | None) -> list[str]:
        scope = self._scope(scope_ids)
        hits = process.extract(normalize(question), scope.keys, scorer=fuzz.partial_ratio, limit=3)
        return [self._label(scope.ids[index]) for _, _, index in hits]
