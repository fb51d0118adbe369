"""The corpus schema: what a store's tables hold, in the corpus's own words (docs/design.md §1)."""

from foretab.corpus.schema import (
    CorpusSchema,
    Level,
    Measure,
    TableTemplates,
    TimeColumn,
    default_schema,
    load_schema,
    packaged_schemas,
)

__all__ = [
    "CorpusSchema",
    "Level",
    "Measure",
    "TableTemplates",
    "TimeColumn",
    "default_schema",
    "load_schema",
    "packaged_schemas",
]
