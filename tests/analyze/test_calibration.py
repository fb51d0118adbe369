"""Calibrated probabilities (issue 30): the saved map, its checks, and how answers state it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from foretab.analyze import RuleAnalyzer
from foretab.analyze.calibration import (
    ARTIFACT_NAME,
    Curve,
    ProbabilityCalibration,
    ProbabilityKind,
    kind_of,
    load_calibration,
    model_digest,
)
from foretab.core.months import Month
from foretab.core.plan import (
    Aggregate,
    ChangeMeasure,
    Comparison,
    EntityRef,
    Extreme,
    Plan,
    Task,
    Threshold,
    TimeWindow,
)
from foretab.core.series import Forecast, ForecastPoint, History
from foretab.errors import ForecastError
from foretab.forecast.source import DISTRIBUTION_GRID

R, JAN = Month(2021, 12), Month(2022, 1)
A = EntityRef("Nanjing", "Jiangning District", "Sun Garden")
HISTORY = History({A: {R: 10_000.0}})
GRID = np.asarray(DISTRIBUTION_GRID)
MODEL_FILE = b"the store model's bytes"


def _plan(comparison: Comparison = Comparison.VS_CURRENT) -> Plan:
    return Plan(
        "q",
        R,
        (A,),
        TimeWindow(JAN, JAN, "next month"),
        Aggregate.VALUE,
        Task.REASONING,
        comparison,
        ChangeMeasure.ABSOLUTE,
    )


def _skewed() -> Forecast:
    """Point 10,050 but 70% of the mass below today's 10,000 (shares 0.3 / 0.7)."""
    qs = np.where(GRID < 0.7, 9_000 + 1_000 * GRID / 0.7, 10_000 + 500 * (GRID - 0.7) / 0.3)
    q = tuple(float(v) for v in qs)
    point = ForecastPoint(10_050.0, q[9], q[-10], q)
    return Forecast("model:test", {A: {JAN: point}}, 0.8, {}, DISTRIBUTION_GRID, "backtest")


def _halving(kind: ProbabilityKind = ProbabilityKind.REASONING) -> ProbabilityCalibration:
    """A map that states half of every scenario share."""
    curve = Curve((0.0, 1.0), (0.0, 0.5), "isotonic", 500)
    return ProbabilityCalibration({kind: curve}, model_digest(MODEL_FILE), "train.jsonl")


class _Artifacts:
    """A store's artifacts (``load_artifact`` / ``save_artifact``) in a dict."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files

    def load_artifact(self, name: str) -> bytes | None:
        return self.files.get(name)

    def save_artifact(self, name: str, data: bytes) -> None:
        self.files[name] = data


def test_an_answer_states_the_calibrated_probability_and_keeps_the_share() -> None:
    plain = RuleAnalyzer("point").analyze(_plan(), HISTORY, _skewed())
    halved = RuleAnalyzer("point", calibration=_halving).analyze(_plan(), HISTORY, _skewed())
    assert plain.answer == halved.answer == [["Increase"]]
    assert plain.probability == plain.scenario_share == pytest.approx(0.3, abs=0.03)
    assert halved.scenario_share == plain.scenario_share
    assert halved.probability == pytest.approx(plain.probability / 2, abs=1e-9)
    assert f"{halved.probability:.0%}" in halved.text
    assert "reasoning isotonic calibration fitted on train.jsonl" in halved.uncertainty


def test_the_map_never_changes_the_answer_chosen() -> None:
    # Most-probable picks "Decrease" (share 0.7) over the point's "Increase" (0.3): the
    # decision reads the shares, and a monotone map keeps their order in the words.
    best = RuleAnalyzer("most-probable", calibration=_halving)
    result = best.analyze(_plan(), HISTORY, _skewed())
    assert result.answer == [["Decrease"]]
    assert result.scenario_share == pytest.approx(0.7, abs=0.03)
    assert result.probability == pytest.approx(result.scenario_share / 2)
    assert f"({result.probability:.0%})" in result.text


def test_a_kind_without_a_map_states_its_share() -> None:
    analyzer = RuleAnalyzer("point", calibration=lambda: _halving(ProbabilityKind.SCOPE))
    result = analyzer.analyze(_plan(), HISTORY, _skewed())
    assert result.probability == result.scenario_share
    assert "no calibration for this kind" in result.uncertainty


def test_kinds_follow_the_plan() -> None:
    plan = _plan()
    assert kind_of(plan) is ProbabilityKind.REASONING
    assert kind_of(replace(plan, threshold=Threshold(10_000.0, True))) is ProbabilityKind.THRESHOLD
    window = TimeWindow(JAN, Month(2022, 3), "next quarter")
    which = replace(
        plan, window=window, comparison=Comparison.NONE, task=Task.FORECAST,
        which_month=Extreme.HIGHEST,
    )  # fmt: skip
    assert kind_of(which) is ProbabilityKind.WHICH_MONTH


def test_a_calibration_round_trips_through_its_json() -> None:
    saved = _halving()
    again = ProbabilityCalibration.from_json(saved.to_json())
    assert again.curves == saved.curves and again.model_sha256 == saved.model_sha256
    assert float(again.stated(ProbabilityKind.REASONING, 0.6)) == pytest.approx(0.3)


def test_stated_probabilities_are_never_certain() -> None:
    curve = Curve((0.0, 1.0), (0.0, 1.0), "isotonic", 100)
    assert 0 < float(curve(0.0)) < 0.01 and 0.99 < float(curve(1.0)) < 1


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (b'"y": [0.0, 0.5]', b'"y": [0.5, 0.0]'),  # not monotone
        (b'"y": [0.0, 0.5]', b'"y": [0.0, 1.5]'),  # not a probability
        (b'"n": 500', b'"n": 500, "code": "import os"'),  # a field the format has not
    ],
)
def test_a_tampered_file_is_refused_with_the_fix(change: bytes, why: bytes) -> None:
    data = _normalise(_halving().to_json())
    tampered = data.replace(change, why)
    assert tampered != data  # the change applied
    with pytest.raises(ForecastError, match="calibration file is invalid") as raised:
        ProbabilityCalibration.from_json(tampered)
    assert "bench calibrate" in " ".join(raised.value.suggestions)


def _normalise(data: bytes) -> bytes:
    import json

    return json.dumps(json.loads(data)).encode()


def test_a_pickle_is_not_a_calibration() -> None:
    import pickle

    with pytest.raises(ForecastError, match="invalid"):
        ProbabilityCalibration.from_json(pickle.dumps({"kinds": {}}))


def test_a_calibration_of_another_model_is_not_used() -> None:
    files = {"store_model.zip": MODEL_FILE, ARTIFACT_NAME: _halving().to_json()}
    store = _Artifacts(files)
    assert load_calibration(store, "store_model.zip") == _halving()
    files["store_model.zip"] = b"a retrained model"
    assert load_calibration(store, "store_model.zip") is None
    assert load_calibration(_Artifacts({"store_model.zip": MODEL_FILE}), "store_model.zip") is None
