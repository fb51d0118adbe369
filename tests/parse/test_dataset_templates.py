"""Contract with the dataset builder: every template phrasing parses back to its family.

Renders each phrasing of ``foretab.bench.qa.templates`` with real project names and the
catalogued time expressions, then checks the parser's Plan against the template's task,
aggregate, comparison and measure.
"""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

from foretab.core.months import Month
from foretab.core.plan import Aggregate
from foretab.parse.entities import EntityIndex
from foretab.parse.parser import parse_question
from foretab.parse.timexpr import catalog
from foretab.store.catalog import EntityEntry

templates = pytest.importorskip("foretab.bench.qa.templates")
REFERENCE = Month(2021, 12)


def _kind(first: Month, last: Month) -> str:
    future = first > REFERENCE
    one = first == last
    return {
        (True, True): templates.WindowKind.FUTURE_MONTH,
        (True, False): templates.WindowKind.FUTURE_SPAN,
        (False, True): templates.WindowKind.PAST_MONTH,
        (False, False): templates.WindowKind.PAST_SPAN,
    }[(future, one)]


def test_every_phrasing_parses_to_its_family(
    corpus_index: EntityIndex, corpus_entries: list[EntityEntry]
) -> None:
    rng = random.Random(7)
    windows = defaultdict(list)
    for window in catalog(REFERENCE):
        windows[_kind(window.first, window.last)].append(window)
    by_district = defaultdict(list)
    for entry in corpus_entries:
        by_district[(entry.outer, entry.inner)].append(entry.name)
    places = sorted(place for place, names in by_district.items() if len(names) >= 3)
    failures = []
    checked = 0
    for template in templates.TEMPLATES:
        for phrasing in range(len(template.phrasings)):
            for _ in range(6):
                city, district = rng.choice(places)
                count = rng.choice([2, 3]) if template.multi else 1
                names = rng.sample(by_district[(city, district)], count)
                window = rng.choice(windows[template.window])
                form = rng.randrange(4)
                question = templates.render(
                    template, phrasing, names, district, city, window.expression, form
                )
                plan = parse_question(question, corpus_index, REFERENCE)
                aggregate = template.aggregate
                if window.first == window.last and aggregate is not Aggregate.EACH:
                    aggregate = Aggregate.VALUE
                expected = (names, window.first, window.last, aggregate, template.task,
                            template.comparison, template.measure)  # fmt: skip
                got = ([p.name for p in plan.entities], plan.window.first, plan.window.last,
                       plan.aggregate, plan.task, plan.comparison, plan.measure)  # fmt: skip
                checked += 1
                if got != expected:
                    failures.append((template.template_id, question, got))
    assert checked >= 500
    assert not failures, "\n".join(f"{t} {q} -> {g}" for t, q, g in failures[:12])
