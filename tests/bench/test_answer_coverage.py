"""``bench corpus --answers``: the engine's stated intervals scored against the future store."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from tests.doubles import SpreadStoreModel

from foretab.analyze.scenarios import Copula
from foretab.bench.forecast.answers import KindScore, bench_answers, coverage
from foretab.forecast.source import ModelSource


def test_coverage_counts_the_truths_inside_below_and_above() -> None:
    cov, width, below, above = coverage([0, 0, 0, 10], [1, 1, 1, 14], [0.5, 2, -1, 10])
    assert (cov, width, below, above) == (0.5, 1.75, 0.25, 0.25)
    assert all(math.isnan(v) for v in coverage([], [], []))


def _scored(db: str, sigma: float) -> dict[str, KindScore]:
    spread = lambda e: ModelSource.with_store_dates(SpreadStoreModel(sigma), e.store)  # noqa: E731
    (result,) = bench_answers(db, future_source=spread, limit=2)
    assert result.reference == "2021-12"
    return {k.kind: k for k in result.kinds}


@pytest.mark.slow  # two passes of the engine over the mini store: ~9 s
def test_every_kind_is_scored_through_the_engine(mini_duckdb: str) -> None:
    narrow, wide = _scored(mini_duckdb, 1e-6), _scored(mini_duckdb, 0.3)
    assert set(wide) == {
        *(f"window max {h}m" for h in (3, 6, 12)),
        "district month", "city month",
        *(f"{level} month {q}" for level in ("district", "city") for q in ("1-3m", "4-6m", "7-9m", "10-12m")),
        *(f"{level} window {h}m" for level in ("district", "city") for h in (3, 6, 12)),
    }  # fmt: skip
    for kind, k in wide.items():
        assert k.n == narrow[kind].n
        if k.n:
            assert k.coverage + k.below + k.above == pytest.approx(1.0)
            assert k.mean_width > narrow[kind].mean_width
    assert wide["window max 3m"].n and wide["city month"].n
    # A project's maximum from (nearly) point forecasts is (nearly) never its true value.
    assert narrow["window max 3m"].coverage < 0.2 < wide["window max 3m"].coverage


def test_a_places_months_are_also_scored_by_quarter_of_the_horizon() -> None:
    from foretab.bench.forecast.answers import _place_questions
    from foretab.core.months import Month

    asked = list(_place_questions([("Nanjing", "Gulou")], Month(2021, 12), "district"))
    months = [kinds for _, kinds in asked[:12]]
    assert [kinds[1] for kinds in months] == [
        f"district month {q}" for q in ("1-3m", "4-6m", "7-9m", "10-12m") for _ in range(3)
    ]
    assert {kinds[0] for kinds in months} == {"district month"}
    assert [kinds for _, kinds in asked[12:]] == [(f"district window {h}m",) for h in (3, 6, 12)]


BASE = "months 0.7, district 0.05, city 0.05"


@pytest.mark.parametrize(
    ("options", "copulas", "labels"),
    [
        pytest.param(
            ["--shock-growth", "0,0.1"],
            [Copula(), Copula(growth=0.1)],
            [BASE, f"{BASE}, growth 0.1"],
            id="growth",
        ),
        pytest.param(
            ["--shock-shift", "0,0.08", "--outer-correlation", "0.05,0.03"],
            [Copula(), Copula(shift=0.08), Copula(outer=0.03), Copula(outer=0.03, shift=0.08)],
            [BASE, f"{BASE}, shift 0.08", "months 0.7, district 0.05, city 0.03",
             "months 0.7, district 0.05, city 0.03, shift 0.08"],
            id="shift",
        ),
    ],
)  # fmt: skip
def test_cli_answers_scores_every_copula_asked_for(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    options: list[str],
    copulas: list[Copula],
    labels: list[str],
) -> None:
    from typer.testing import CliRunner

    from foretab.bench.forecast import answers
    from foretab.cli.main import app, register_commands

    seen: list[Copula] = []

    def fake(db: str, *, copulas: list[Copula], **_: object) -> list[answers.AnswersBench]:
        seen.extend(copulas)
        kind = KindScore("city month", 1, 1.0, 2.0, 0.0, 0.0, 0)
        return [answers.AnswersBench("2021-12", 0.8, answers.described(c), (kind,), 1.0) for c in copulas]  # fmt: skip

    monkeypatch.setattr(answers, "bench_answers", fake)
    register_commands()
    out = tmp_path / "copulas.json"
    ran = CliRunner().invoke(
        app,
        ["bench", "corpus", "--db", str(tmp_path / "x.duckdb"), "--answers", *options,
         "--json", str(out)],
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    assert seen == copulas
    assert [r["copula"] for r in json.loads(out.read_text())] == labels
