"""``foretab bench scale``'s arithmetic, table and plot, and one real K = 1 run (slow)."""

from __future__ import annotations

from pathlib import Path

import pytest

from foretab.bench.perf.scale import (
    ScaleRow,
    growth_exponents,
    markdown_table,
    measure_scale,
    plot_scale,
)


def _rows(power: float) -> list[ScaleRow]:
    return [
        ScaleRow(scale=k, backend="duckdb", ingest_s=2.0 * k**power, warm_p50_ms=10.0)
        for k in (1, 10, 100)
    ]


@pytest.mark.parametrize("power", [0.5, 1.0, 1.3])
def test_the_exponent_is_the_log_log_slope(power: float) -> None:
    fitted = growth_exponents(_rows(power))["duckdb"]
    assert fitted["ingest_s"] == pytest.approx(power, abs=0.01)
    assert fitted["warm_p50_ms"] == pytest.approx(0.0, abs=0.01)
    assert "train_s" not in fitted  # never measured (0): no exponent is made up


def test_one_size_has_no_exponent() -> None:
    assert growth_exponents(_rows(1.0)[:1]) == {}


def test_the_table_has_a_line_per_size_and_one_of_exponents() -> None:
    table = markdown_table(_rows(1.0)).splitlines()
    assert len(table) == 2 + 3 + 1
    assert table[-1].startswith("| exponent | duckdb |")
    assert "1.00" in table[-1]


@pytest.mark.slow
def test_the_plot_is_a_png(tmp_path: Path) -> None:
    path = plot_scale(_rows(1.0), tmp_path / "scale.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_k1_is_measured_end_to_end(tmp_path: Path) -> None:
    row = measure_scale(1, tmp_path, per_family=2, cold_runs=1)
    assert row.rows > 50_000 and row.history_tables == 306
    assert row.questions == 14 and row.refused < row.questions
    assert row.ingest_s > 0 and row.train_s > 0 and row.cold_start_s > 0
    assert row.ingest_rss_mb > 50 and row.store_mb > 1
    assert set(row.family_p50_ms) >= {"next month", "last month"}
