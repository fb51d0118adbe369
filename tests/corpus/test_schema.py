"""The corpus schema: validation (it is data from possibly untrusted stores), mapping flags."""

from __future__ import annotations

import json

import pytest

from foretab.corpus.schema import (
    SLOTS,
    CorpusSchema,
    Phrasing,
    SchemaError,
    default_schema,
    load_schema,
    packaged_schemas,
    schema_from_mapping,
)


def _data(**tables: str) -> dict:
    data = json.loads(load_schema("stocks").to_json())
    data["tables"].update(tables)
    return data


def test_the_default_schema_is_the_real_estate_layout() -> None:
    schema = default_schema()
    assert [lv.name for lv in schema.levels] == ["city", "district", "project"]
    groups = {"city": "Nanjing", "district": "Jiangning District"}
    assert schema.table_name(groups, 2021) == "project_price_table_jiangning_district_nanjing_2021"
    assert (
        schema.caption(groups, 2021) == "Project Price Table for Jiangning District, Nanjing, 2021"
    )
    cols = schema.columns
    assert (cols.entity, cols.month, cols.value, cols.summed) == (
        "project_name",
        "month",
        "price",
        "units_sold",
    )


def test_a_one_level_schema_fills_the_innermost_slot() -> None:
    schema = load_schema("stocks")
    assert [schema.slot_level(s) is not None for s in SLOTS] == [False, False, True]
    assert schema.table_name({}, 2005) == "stock_price_table_2005"
    assert schema.caption({}, 2005) == "Stock Price Table for 2005"
    assert schema.columns.summed is None


def test_every_packaged_schema_loads() -> None:
    assert {"realestate", "stocks"} <= set(packaged_schemas())
    for name in packaged_schemas():
        assert isinstance(load_schema(name), CorpusSchema)


@pytest.mark.parametrize(
    ("tables", "why"),
    [
        ({"caption": "{year.__class__}"}, "placeholder"),  # attribute access reaches objects
        ({"caption": "Table {year:>10}"}, "placeholder"),  # format specs
        ({"caption": "Table {nothing} {year}"}, "placeholder"),
        ({"caption": "Stock table"}, "exactly once"),
        ({"name": "foretab_meta_{year}"}, "must not start"),
        ({"name": "pg_settings_{year}"}, "must not start"),
        ({"name": "stocks_{year}_x"}, "end with"),
        ({"name": "Stocks-{year}"}, "only a-z"),
        ({"name": "stocks_{year}_{year}"}, "exactly once"),
    ],
)
def test_templates_are_refused_unless_they_name_only_levels_and_year(tables, why) -> None:
    with pytest.raises(SchemaError) as caught:
        CorpusSchema.from_json(json.dumps(_data(**tables)), "the store")
    assert why in caught.value.message
    assert "foretab ingest" in caught.value.message


def test_a_template_must_name_every_group_level() -> None:
    data = json.loads(default_schema().to_json())
    data["tables"]["name"] = "project_price_table_{city}_{year}"  # district missing: collisions
    with pytest.raises(SchemaError, match="exactly once"):
        CorpusSchema.from_json(json.dumps(data), "x")


def test_unknown_fields_and_bad_roles_are_refused(tmp_path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(load_schema_text("stocks") + '\nextra_field = "x"\n', encoding="utf-8")
    with pytest.raises(SchemaError, match="extra_field"):
        load_schema(bad)
    summed_first = tmp_path / "summed.toml"
    summed_first.write_text(
        load_schema_text("stocks").replace('aggregation = "mean"', 'aggregation = "sum"'),
        encoding="utf-8",
    )
    with pytest.raises(SchemaError, match="primary"):
        load_schema(summed_first)


def test_a_missing_schema_file_names_the_packaged_ones() -> None:
    with pytest.raises(SchemaError) as caught:
        load_schema("no-such-schema.toml")
    assert "realestate" in caught.value.message and "stocks" in caught.value.message


def test_mapping_flags_make_a_schema_named_after_the_columns() -> None:
    schema = schema_from_mapping(["region", "store"], "date", ["sales", "orders"])
    assert [lv.name for lv in schema.levels] == ["region", "store"]
    assert schema.table_name({"region": "North East"}, 2020) == "sales_table_north_east_2020"
    assert schema.caption({"region": "North East"}, 2020) == "Sales Table for North East, 2020"
    assert (schema.primary.aggregation, schema.summed.aggregation) == ("mean", "sum")  # type: ignore[union-attr]
    with pytest.raises(SchemaError, match="1 to 3"):
        schema_from_mapping(["a", "b", "c", "d"], "t", ["m"])
    with pytest.raises(SchemaError, match="distinct"):
        schema_from_mapping(["date"], "date", ["price"])


def load_schema_text(name: str) -> str:
    return packaged_schemas()[name]


def test_a_schema_stored_before_phrasing_existed_gets_its_packaged_phrasing() -> None:
    stored = json.loads(default_schema().to_json())
    del stored["phrasing"]
    schema = CorpusSchema.from_json(json.dumps(stored), "the store")
    assert schema == default_schema()
    assert hash(schema) == hash(default_schema())  # frozen and hashable, phrasing included
    assert schema.phrasing.refusals_en  # developer, rent, mortgage, …
    other = {**stored, "name": "my corpus"}
    assert CorpusSchema.from_json(json.dumps(other), "the store").phrasing == Phrasing()
