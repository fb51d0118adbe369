"""A group shock that passes to its outer place with the horizon (``Copula.shift``).

Late in a horizon a move may be citywide rather than a district's own. With ``shift`` s,
at h months after R a share ``min(s h, 1)`` of the group (district) shock's variance has
passed to a random walk of its outer place (city): two projects of one district still
correlate ``shared + outer``, two of one city in different districts ``outer + min(s h,
1) × shared``; each project's own distribution is unchanged. At 0 the draws are the old
ones bit for bit.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from foretab.analyze import RuleAnalyzer, scenarios
from foretab.analyze.scenarios import Copula, window_table
from foretab.errors import QuestionError
from tests.analyze.test_drawn_blocks import _plain
from tests.analyze.test_growing_shock import (
    ALL,
    HISTORY,
    _corr,
    _drawn,
    _plan,
    _standard,
    random_table,
)


def test_the_group_shock_passes_to_the_outer_place_as_specified() -> None:
    drawn = _drawn(Copula(0.7, 0.05, 0.05, 0.0, 0.0, 0.1))
    for h in (1, 5, 10, 12):
        month = h - 1
        moved = min(0.1 * h, 1.0) * 0.05
        # one district: shared + outer at every horizon
        assert _corr(drawn, 0, 1, month) == pytest.approx(0.1, abs=0.03)
        # one city, two districts: outer plus what has passed
        assert _corr(drawn, 0, 2, month) == pytest.approx(0.05 + moved, abs=0.03)
        # two cities: independent
        assert abs(_corr(drawn, 0, 3, month)) < 0.03
        # each project's own distribution is the same (its normal scores stay standard)
        assert drawn[:, 0, month].std() == pytest.approx(1.0, abs=0.03)
    # across districts and months: outer, plus the walk up to the earlier month
    assert _corr(drawn, 0, 2, 4, 11) == pytest.approx(0.05 + 0.025, abs=0.03)
    # a project's months: no more than before
    # a project's months: own 0.6 + city 0.05 + the district's kept parts + the walk
    kept = 0.05 * np.sqrt(0.9 * 0.4)
    assert _corr(drawn, 0, 0, 0, 11) == pytest.approx(0.6 + 0.05 + kept + 0.005, abs=0.03)


def test_the_cities_share_grows_enough_to_be_seen() -> None:
    drawn = _drawn(Copula(0.7, 0.1, 0.0, 0.0, 0.0, 0.25))
    # with no outer shock of its own the city's share is only what has passed
    assert _corr(drawn, 0, 2, 0) == pytest.approx(0.025, abs=0.03)
    assert _corr(drawn, 0, 2, 11) == pytest.approx(0.1, abs=0.03)  # all of it from month 4
    assert _corr(drawn, 0, 1, 11) == pytest.approx(0.1, abs=0.03)


def test_months_up_to_r_and_tables_without_horizons_do_not_shift() -> None:
    table = window_table(_plan(), ALL, HISTORY, _standard())
    unknown = replace(table, horizon=None)
    before = replace(table, horizon=np.zeros(12, dtype=int))  # every month up to R
    still = _drawn(Copula(0.7, 0.05, 0.05), n=500, table=table)
    for other in (unknown, before):
        shifted = _drawn(Copula(0.7, 0.05, 0.05, 0.0, 0.0, 0.5), 500, other)
        np.testing.assert_array_equal(shifted, still)


def test_nothing_shifts_without_a_group_shock() -> None:
    table = window_table(_plan(), ALL, HISTORY, _standard())
    still = _drawn(Copula(0.7, 0.0, 0.05), n=500, table=table)
    np.testing.assert_array_equal(_drawn(Copula(0.7, 0.0, 0.05, 0.0, 0.0, 0.5), 500), still)


@pytest.mark.parametrize("seed", range(8))
def test_shift_0_draws_the_old_draws_bit_for_bit(seed: int) -> None:
    table, groups = random_table(seed)
    fleeting = [0.0, 0.5][seed % 2]
    with scenarios.using(Copula(0.8, 0.1, 0.05, fleeting, 0.0, 0.0)):
        new = list(scenarios._drawn(table, 200, groups, seed))
        old = list(_plain(table, 200, groups, seed))
    for (_, a), (_, b) in zip(new, old, strict=True):
        assert a.tobytes() == b.tobytes()
    # and with a growth, shift 0 draws what the growth alone drew
    with scenarios.using(Copula(0.8, 0.1, 0.05, fleeting, 0.2)):
        grown = [d.tobytes() for _, d in scenarios._drawn(table, 200, groups, seed)]
    with scenarios.using(Copula(0.8, 0.1, 0.05, fleeting, 0.2, 0.0)):
        assert [d.tobytes() for _, d in scenarios._drawn(table, 200, groups, seed)] == grown
    with scenarios.using(Copula(0.8, 0.1, 0.05, fleeting, 0.0, 0.3)):
        shifted = np.concatenate([d for _, d in scenarios._drawn(table, 200, groups, seed)], 1)
    if (table.horizon > 0).any() and (table.present & table.forecast).any():
        assert not np.array_equal(shifted, np.concatenate([d for _, d in new], axis=1))


def test_the_default_copula_does_not_shift() -> None:
    assert scenarios.SHIFT == 0.0
    assert Copula().shift == 0.0 == scenarios.copula().shift


def test_one_projects_window_interval_never_sees_the_shift() -> None:
    told = []
    for shift in (0.0, 0.5):
        analyzer = RuleAnalyzer(copula=Copula(0.7, 0.05, 0.05, 0.0, 0.0, shift))
        told.append(analyzer.analyze(_plan((ALL[0],)), HISTORY, _standard()).intervals)
    assert told[0] == told[1] and told[0]


def test_a_negative_shift_is_refused_and_a_shift_is_said() -> None:
    with pytest.raises(QuestionError, match="--shock-shift"):
        Copula(0.7, 0.05, 0.05, 0.0, 0.0, -0.1)
    with pytest.raises(QuestionError, match="--shock-shift"):
        Copula(shift=float("inf"))
    with scenarios.using(Copula(0.7, 0.05, 0.05, 0.0, 0.0, 0.08)):
        said = scenarios.described()
    assert "0.08 of the group shock's variance passing to the outer place's" in said
    with scenarios.using(Copula(0.7, 0.0, 0.05, 0.0, 0.0, 0.08)):  # no group shock to pass
        assert "passing" not in scenarios.described()
