"""Example questions for the page, about projects of the store being served.

Each candidate is planned by the engine's own planner at start-up and kept only if it
plans, so the page never offers an example the engine refuses (a kind of question the
rules cannot plan yet simply does not appear).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from foretab.core.catalog import EntityEntry
from foretab.core.months import Month
from foretab.errors import ForetabError


def candidate_questions(projects: Sequence[EntityEntry], reference: Month) -> list[str]:
    """One question per kind: forecast, monthly forecast, comparison, scope, history, Chinese."""
    recent = [p for p in projects if p.last_month == reference and p.n_months >= 12]
    groups: dict[tuple[str, str], list[EntityEntry]] = {}
    for p in recent:
        groups.setdefault((p.outer, p.inner), []).append(p)
    if not groups:
        return []
    (city, district), group = max(groups.items(), key=lambda kv: (len(kv[1]), kv[0]))
    a, b = (group + group)[:2]
    # A one-level corpus (stocks: just a symbol) has no places to name.
    place = ", ".join(p for p in (district, city) if p)
    where = f" in {place}" if place else ""
    questions = [
        f"What will the monthly prices of {a.name}{where} be in the next six months?",
        f"Which of {a.name} or {b.name}{where} will see a bigger price increase next year?",
        f"What will the price of {b.name}{where} be next month?",
        *([f"Which project in {place} will be the most expensive next month?"] if place else []),
        f"What was the highest price of {a.name}{where} in {reference.year}?",
    ]
    chinese = next((p for p in recent if p.aliases and p.inner_aliases and p.outer_aliases), None)
    if chinese is not None:
        city_zh, district_zh = chinese.outer_aliases[0], chinese.inner_aliases[0]
        questions += [
            f"{city_zh}{district_zh}{chinese.aliases[0]}未来六个月每个月的价格分别是多少？",
            f"{city_zh}{district_zh}下个月哪个项目最贵？",
        ]
    return questions


def example_questions(
    projects: Sequence[EntityEntry], reference: Month, plans: Callable[[str], object]
) -> list[str]:
    """The candidates that ``plans`` (the engine's planner) accepts."""
    kept = []
    for question in candidate_questions(projects, reference):
        try:
            plans(question)
        except ForetabError:
            continue
        kept.append(question)
    return kept
