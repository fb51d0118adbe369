"""``CorpusSchema``: entity levels, time column, measures and table templates of a corpus.

A schema is data (TOML on disk, JSON in the store's ``foretab_meta``), validated by
pydantic: a store from someone else carries its schema, so every field is checked and the
templates may only name the schema's own levels and ``year`` — no attribute access, no
format specs (``str.format`` on ``{level.__class__}`` would otherwise reach Python objects).

The question engine knows entities by position, outermost first, mapped onto three slots
(``outer``, ``inner``, ``name`` in the engine's types; a one-level schema such as
``symbol`` fills only the last) and two measure roles: the primary measure (the first; a
mean over a window, forecast) and an optional summed one (``units`` in the plan language).
"""

from __future__ import annotations

import json
import re
import string
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from foretab.errors import ForetabError

_IDENTIFIER = re.compile(r"[a-z][a-z0-9_]{0,39}")
# Table names are ``<fixed text and snake-cased level values>_<year>``; foretab's own tables
# and every system catalog are out of reach of any template.
RESERVED_PREFIXES = ("foretab_", "pg_", "sqlite_", "duckdb_", "information_schema", "sys")
SLOTS = ("outer", "inner", "name")  # the engine's entity slots (EntityRef), outermost first
# The store's column for each slot: its frames, catalog and entity table have used these
# names since the first store, whatever the schema calls its levels.
STORE_COLUMNS = dict(zip(SLOTS, ("city", "district", "project"), strict=True))
STORE_VALUE_COLUMN = "price"  # the primary measure in the store's ``panel()`` frame


# Column names the scope answer query gives its own results (``foretab.sql.scope``).
_QUERY_NAMES = ("scope", "pos", "value", "candidates", "cat", "top_pos", "units")


class SchemaError(ForetabError):
    """A corpus schema (file, flags or a store's stored copy) is not valid."""


@dataclass(frozen=True, slots=True)
class TableColumns:
    """The SQL columns every data table has, as the corpus schema names them."""

    entity: str  # the leaf level, e.g. project_name or symbol
    month: str
    value: str  # the primary measure, e.g. price
    summed: str | None  # the summed measure (units_sold), when the schema has one
    # Names of the bound outer / inner slot columns of the history queries (the group
    # levels' names, e.g. city and district; the store's own names for absent levels).
    outer: str = STORE_COLUMNS["outer"]
    inner: str = STORE_COLUMNS["inner"]
    entity_level: str = STORE_COLUMNS["name"]  # the leaf level's name, e.g. project

    @property
    def standard(self) -> tuple[str, ...]:
        return tuple(c for c in (self.entity, self.month, self.value, self.summed) if c)

    @property
    def summed_role(self) -> str:
        """The summed measure's column, or the name a query gives its NULL stand-in."""
        return self.summed or "units"


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Level(_Frozen):
    """One entity level, e.g. ``district``: its input column and the words that name it."""

    name: str = Field(pattern=_IDENTIFIER.pattern)
    plural: str = ""
    name_zh: str = ""  # the level's name in Chinese messages ("城市", "区")
    column: str = Field(min_length=1, max_length=100)
    alias_column: str | None = None  # e.g. ``project_zh``: another name of the same entity
    sql_column: str | None = Field(None, pattern=_IDENTIFIER.pattern)  # leaf level only
    words_en: tuple[str, ...] = ()
    words_zh: tuple[str, ...] = ()

    @property
    def plural_name(self) -> str:
        return self.plural or f"{self.name}s"


class Measure(_Frozen):
    """One measured column, e.g. the average price: unit, window aggregation, sign."""

    name: str = Field(min_length=1, max_length=40)
    name_zh: str = Field("", max_length=20)  # in Chinese answers ("成交均价")
    short_zh: str = Field("", max_length=20)  # after 最高月度 / 最低月度 ("均价")
    column: str = Field(min_length=1, max_length=100)
    sql_column: str = Field(pattern=_IDENTIFIER.pattern)
    unit: str = Field("", max_length=20)
    decimals: int | None = Field(None, ge=0, le=6)
    aggregation: Literal["mean", "sum"] = "mean"
    sign: Literal["any", "nonnegative", "positive"] = "any"
    integer: bool = False
    required: bool = True
    forecast: bool = False
    synonyms_en: tuple[str, ...] = ()
    synonyms_zh: tuple[str, ...] = ()


class TimeColumn(_Frozen):
    """The monthly time column; ``format`` (strftime) when it is not ``YYYY-MM[-01]``."""

    column: str = Field(min_length=1, max_length=100)
    format: str | None = Field(None, max_length=40)


class TableTemplates(_Frozen):
    """How tables are named and captioned: ``{level}`` placeholders and ``{year}``."""

    name: str = Field(min_length=6, max_length=120)
    caption: str = Field(min_length=6, max_length=200)


class Refusal(_Frozen):
    """A question about something the corpus does not hold: its pattern and its name."""

    pattern: str = Field(min_length=1, max_length=1000)
    what: str = Field(min_length=1, max_length=80)

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        return _regex(pattern)


class Phrasing(_Frozen):
    """How the corpus's questions word its things: the planner's cue patterns and words.

    Regular expressions (fields ending in ``_en`` / ``_zh`` that are strings) and word
    lists, read by ``foretab.parse``; empty patterns never match. Real estate's fill the
    default schema; a schema without them asks in the generic question language only.
    """

    # Cue patterns (regular expressions), English
    change_en: str = ""
    count_en: str = ""
    which_en: str = ""
    which_named_en: str = ""
    value_extreme_en: str = ""
    value_not_units_en: str = ""
    gap_after_en: str = ""
    polite_en: str = ""
    now_en: str = ""
    high_en: str = ""
    mean_en: str = ""
    units_en: str = ""
    # Alternations spliced into larger patterns (``a|b``)
    top_n_nouns_en: str = ""
    gap_words_en: str = ""
    # Cue patterns, Chinese
    range_zh: str = ""
    threshold_after_zh: str = ""
    count_zh: str = ""
    # Groups asked about as wholes (docs/design.md §4.1, ``parse.places``): the inner level's word
    # in a question ("which district"), "every district", "the two cheapest districts",
    # a ranked inner level (the meaning check), leaf words ("which project": the
    # question is about the group's entities), and counting the entities.
    inner_word_en: str = ""
    inner_word_zh: str = ""
    every_inner_en: str = ""
    every_inner_zh: str = ""
    # the outer level ranked with no place named ("which city is the most expensive?"):
    # every outer group is the subject
    outer_rank_en: str = ""
    outer_rank_zh: str = ""
    outer_noun_en: str = ""  # the outer level's noun alone ("city|cities")
    every_outer_en: str = ""
    every_outer_zh: str = ""
    n_outer_en: str = ""
    n_outer_zh: str = ""
    every_entity_en: str = ""  # "every project of D": each entity with its value
    every_entity_zh: str = ""
    weighted_en: str = ""  # "units-weighted", "weighted by units sold": the summed measure weighs
    weighted_zh: str = ""
    n_inner_en: str = ""
    n_inner_zh: str = ""
    ranked_inner_en: str = ""
    entity_word_en: str = ""
    entity_word_zh: str = ""
    entity_count_en: str = ""
    entity_count_zh: str = ""
    value_extreme_zh: str = ""
    top_units_zh: str = ""
    zh_after_place: str = ""
    place_as_whole: str = ""
    units_zh: str = ""
    value_zh: str = ""
    entity_nouns_zh: str = ""
    # Words
    question_words_en: tuple[str, ...] = ()  # question vocabulary the linker skips
    scope_words_en: tuple[str, ...] = ()  # words of a question about a place as a whole
    filler_en: tuple[str, ...] = ()
    filler_zh: tuple[str, ...] = ()
    place_suffixes: tuple[str, ...] = ()  # a place name's suffixes a user may leave out
    # other spellings of a suffix: (suffix, variants) pairs (a TOML table; pairs keep it hashable)
    suffix_variants: tuple[tuple[str, tuple[str, ...]], ...] = ()
    outer_suffixes: tuple[str, ...] = ()  # also appended to outer names ("nanjing city")
    not_places_zh: tuple[str, ...] = ()  # "X市"-like words that name no place
    refusals_en: tuple[Refusal, ...] = ()
    refusals_zh: tuple[Refusal, ...] = ()
    # Chinese message words: the leaf level, and a whole place's average
    entity_zh: str = ""
    place_average_zh: str = ""

    @field_validator("suffix_variants", mode="before")
    @classmethod
    def _pairs(cls, value: object) -> object:
        return tuple(value.items()) if isinstance(value, dict) else value

    @model_validator(mode="after")
    def _patterns_compile(self) -> Phrasing:
        for _field, value in self:
            if isinstance(value, str):
                _regex(value)
        return self


def _regex(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"not a regular expression ({exc}): {pattern[:60]!r}") from None
    return pattern


class CorpusSchema(_Frozen):
    """Everything the store, the planner and the answers need to know about a corpus."""

    name: str = Field(min_length=1, max_length=60)
    time: TimeColumn
    levels: tuple[Level, ...] = Field(min_length=1, max_length=3)
    measures: tuple[Measure, ...] = Field(min_length=1, max_length=2)
    tables: TableTemplates
    # What a store of this corpus answers, for refusals ("the average price (yuan per m²)
    # and the units sold of projects, districts and cities"); built from the names if empty.
    answers_en: str = Field("", max_length=200)
    answers_zh: str = Field("", max_length=100)
    phrasing: Phrasing = Phrasing()

    @field_validator("measures")
    @classmethod
    def _measure_roles(cls, measures: tuple[Measure, ...]) -> tuple[Measure, ...]:
        if measures[0].aggregation != "mean" or not measures[0].required:
            raise ValueError("the first measure is the primary one: aggregation 'mean', required")
        if len(measures) == 2 and measures[1].aggregation != "sum":
            raise ValueError("a second measure must be summed over a window (aggregation 'sum')")
        return measures

    @model_validator(mode="after")
    def _consistent(self) -> CorpusSchema:
        names = [level.name for level in self.levels]
        if len(set(names)) != len(names) or "year" in names:
            raise ValueError("level names must be distinct and not 'year'")
        if any(level.sql_column for level in self.levels[:-1]):
            raise ValueError("only the last (leaf) level has a sql_column")
        inputs = [self.time.column, *(lv.column for lv in self.levels)]
        inputs += [m.column for m in self.measures]
        if len(set(inputs)) != len(inputs):
            raise ValueError(f"input columns must be distinct, got {inputs}")
        sql = [self.leaf_sql_column, "month", *(m.sql_column for m in self.measures)]
        if len(set(sql)) != len(sql):
            raise ValueError(f"SQL column names must be distinct (and not 'month'), got {sql}")
        groups = {lv.name for lv in self.levels[:-1]}
        # Group level names also name the history queries' slot columns.
        clash = groups & {*sql, *_QUERY_NAMES}
        if clash:
            raise ValueError(f"level names {sorted(clash)} are also SQL column names")
        _check_template(self.tables.name, groups, "tables.name", table_name=True)
        _check_template(self.tables.caption, groups, "tables.caption")
        return self

    # -- roles -------------------------------------------------------------------------------

    @property
    def leaf(self) -> Level:
        return self.levels[-1]

    @property
    def groups(self) -> tuple[Level, ...]:
        """The levels above the leaf: one table per combination of their values and year."""
        return self.levels[:-1]

    @property
    def leaf_sql_column(self) -> str:
        return self.leaf.sql_column or _sql_name(self.leaf.column)

    @property
    def primary(self) -> Measure:
        return self.measures[0]

    @property
    def summed(self) -> Measure | None:
        return self.measures[1] if len(self.measures) == 2 else None

    @property
    def columns(self) -> TableColumns:
        summed = self.summed.sql_column if self.summed else None
        slots = {slot: STORE_COLUMNS[slot] for slot in SLOTS}
        slots.update((slot, name) for slot, name in self.group_slots)
        return TableColumns(
            self.leaf_sql_column,
            "month",
            self.primary.sql_column,
            summed,
            outer=slots["outer"],
            inner=slots["inner"],
            entity_level=self.leaf.name,
        )

    @property
    def group_slots(self) -> tuple[tuple[str, str], ...]:
        """(engine slot, level name) of each level above the leaf, outermost first."""
        slots = SLOTS[len(SLOTS) - len(self.levels) : -1]
        return tuple(zip(slots, (level.name for level in self.groups), strict=True))

    def slot_level(self, slot: str) -> Level | None:
        """The level filling an engine slot (``outer``/``inner``/``name``), or None."""
        offset = len(SLOTS) - len(self.levels)
        index = SLOTS.index(slot) - offset
        return self.levels[index] if index >= 0 else None

    @property
    def answers(self) -> str:
        if self.answers_en:
            return self.answers_en
        measures = " and the ".join(m.name for m in self.measures)
        levels = ", ".join(lv.plural_name for lv in reversed(self.levels))
        return f"the {measures} of {levels}"

    @property
    def answers_in_chinese(self) -> str:
        if self.answers_zh:
            return self.answers_zh
        return "与".join(m.name_zh or m.name for m in self.measures)

    @property
    def words_en(self) -> frozenset[str]:
        """Words naming the corpus's levels and measures, lower case, one word each."""
        phrases = [*(w for lv in self.levels for w in (lv.name, lv.plural_name, *lv.words_en))]
        phrases += [w for m in self.measures for w in (m.name, *m.synonyms_en)]
        return frozenset(word for phrase in phrases for word in phrase.lower().split())

    @property
    def words_zh(self) -> tuple[str, ...]:
        words = [w for lv in self.levels for w in lv.words_zh]
        words += [w for m in self.measures for w in (m.name_zh, m.short_zh, *m.synonyms_zh) if w]
        return tuple(dict.fromkeys(words))

    # -- names ------------------------------------------------------------------------------

    def table_name(self, groups: dict[str, str], year: int) -> str:
        """The table of one group (level name → value) and year, in snake case."""
        return self.tables.name.format(**{k: snake(v) for k, v in groups.items()}, year=year)

    def caption(self, groups: dict[str, str], year: int) -> str:
        return self.tables.caption.format(**groups, year=year)

    def to_json(self) -> str:
        return self.model_dump_json(exclude_defaults=False)

    @classmethod
    def from_json(cls, text: str, where: str) -> CorpusSchema:
        try:
            data = json.loads(text)
            if isinstance(data, dict) and "phrasing" not in data:
                # Stored before schemas carried their phrasing: a packaged schema of the
                # same name (real estate) lends its own, so the store parses as it did.
                shipped = {s.name: s for s in map(load_schema, packaged_schemas())}
                if data.get("name") in shipped:
                    data["phrasing"] = shipped[data["name"]].phrasing.model_dump()
            return cls.model_validate(data)
        except (ValueError, ValidationError) as exc:
            raise SchemaError(
                f"{where} holds an invalid corpus schema ({_first_error(exc)}); the store was "
                "not written by this foretab. Rebuild it with `foretab ingest PATH --db DB`."
            ) from None


def snake(text: str) -> str:
    """``"Bao'an District"`` -> ``"baoan_district"``: ASCII, lower case, underscores."""
    import unicodedata

    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    ascii_text = ascii_text.replace("'", "").replace("\u2019", "")
    return re.sub(r"[^a-z0-9]+", "_", ascii_text.lower()).strip("_")


def _sql_name(column: str) -> str:
    name = snake(column) or "entity"
    return name if name[0].isalpha() else f"c_{name}"


def _check_template(
    template: str, groups: set[str], where: str, *, table_name: bool = False
) -> None:
    fields: list[str] = []
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    for literal, field, spec, conversion in parsed:
        if table_name and literal and not re.fullmatch(r"[a-z0-9_]*", literal):
            raise ValueError(f"{where}: only a-z, 0-9 and _ outside placeholders, got {literal!r}")
        if field is None:
            continue
        if spec or conversion or field not in {*groups, "year"}:
            raise ValueError(
                f"{where}: placeholder {{{field}}} is not one of "
                f"{sorted({*groups, 'year'})} (no format specs or attributes)"
            )
        fields.append(field)
    if set(fields) != {*groups, "year"} or len(fields) != len(set(fields)):
        raise ValueError(f"{where} must name each of {sorted({*groups, 'year'})} exactly once")
    if table_name:
        if not template.endswith("_{year}") or not re.match(r"[a-z]", template):
            raise ValueError(f"{where} must start with a letter and end with _{{year}}")
        if template.startswith(RESERVED_PREFIXES):
            raise ValueError(f"{where} must not start with {', '.join(RESERVED_PREFIXES)}")


def _first_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return f"{where}: {first['msg']}" if where else str(first["msg"])
    return str(exc)


def packaged_schemas() -> dict[str, str]:
    """Schemas shipped with foretab: name (as ``--schema`` takes it) → TOML text."""
    folder = resources.files("foretab.corpus")
    return {
        entry.name.removesuffix(".toml"): entry.read_text(encoding="utf-8")
        for entry in folder.iterdir()
        if entry.name.endswith(".toml")
    }


def load_schema(source: str | Path) -> CorpusSchema:
    """A packaged schema by name (``realestate``, ``stocks``) or a TOML file."""
    shipped = packaged_schemas()
    if isinstance(source, str) and source in shipped:
        return _parse(shipped[source], f"the packaged schema {source!r}")
    path = Path(source)
    if not path.is_file():
        raise SchemaError(
            f"--schema {source}: no such file and not a packaged schema; pass a TOML file or "
            f"one of {', '.join(sorted(shipped))}."
        )
    return _parse(path.read_text(encoding="utf-8"), str(path))


def _parse(text: str, where: str) -> CorpusSchema:
    try:
        return CorpusSchema.model_validate(tomllib.loads(text))
    except (tomllib.TOMLDecodeError, ValidationError) as exc:
        raise SchemaError(f"{where}: not a valid corpus schema ({_first_error(exc)}).") from None


_DEFAULT: CorpusSchema | None = None


def default_schema() -> CorpusSchema:
    """The real-estate schema: stores ingested without ``--schema`` (and older stores)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = load_schema("realestate")
    return _DEFAULT


def schema_from_mapping(
    entity: list[str], time: str, measures: list[str], *, time_format: str | None = None
) -> CorpusSchema:
    """A schema from ``--entity a,b --time t --measure m[,n]``: names are the columns'."""
    if not 1 <= len(entity) <= 3:
        raise SchemaError(
            f"--entity {','.join(entity)}: give 1 to 3 entity columns, outermost first "
            "(e.g. --entity region,store)."
        )
    if not 1 <= len(measures) <= 2:
        raise SchemaError(
            f"--measure {','.join(measures)}: give one measure column, or two where the second "
            "is summed over a window (e.g. --measure price,units)."
        )
    levels = [{"name": _sql_name(c), "column": c} for c in entity]
    levels[-1]["sql_column"] = _sql_name(entity[-1])
    rows = [
        {"name": m, "column": m, "sql_column": _sql_name(m), "aggregation": agg, "forecast": i == 0}
        for i, (m, agg) in enumerate(zip(measures, ("mean", "sum"), strict=False))
    ]
    groups = [lv["name"] for lv in levels[:-1]]
    measure_word = _sql_name(measures[0])
    name = "_".join([f"{measure_word}_table", *(f"{{{g}}}" for g in groups), "{year}"])
    caption = f"{measures[0].replace('_', ' ').title()} Table for " + ", ".join(
        [*(f"{{{g}}}" for g in reversed(groups)), "{year}"]
    )
    data = {
        "name": f"{measure_word} by {'/'.join(entity)}",
        "time": {"column": time, "format": time_format},
        "levels": levels,
        "measures": rows,
        "tables": {"name": name, "caption": caption},
    }
    try:
        return CorpusSchema.model_validate(data)
    except ValidationError as exc:
        raise SchemaError(f"the column mapping is not valid: {_first_error(exc)}.") from None
