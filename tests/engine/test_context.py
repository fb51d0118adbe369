"""One ``StoreContext`` per store generation, shared by every engine over it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from foretab.core.months import Month
from foretab.core.plan import Plan
from foretab.engine import Engine, HybridEngine, StaleContextError, StoreContext
from foretab.parse.planner import RulePlanner
from foretab.store.ingest import ingest_path
from foretab.web.pool import engine_factory
from tests.conftest import MINI_CSV

QUESTION = "What was the average price of Bund Garden in Huangpu District, Shanghai last month?"


def test_engines_over_one_context_share_its_indexes(mini_duckdb: str) -> None:
    context = StoreContext.open(mini_duckdb)
    with Engine.open(context) as a, Engine.open(context, future="none") as b:
        assert a.context is b.context is context
        assert a.planner.index is b.planner.index is context.index  # type: ignore[attr-defined]
        assert a.retriever is b.retriever is context.retriever
        assert a.guard is not b.guard and a.store is not b.store  # one connection each
        assert a.ask(QUESTION).answer == b.ask(QUESTION).answer


def test_the_web_pool_builds_later_engines_from_the_first_ones_context(mini_duckdb: str) -> None:
    build = engine_factory(mini_duckdb)
    with build("none", None) as warm, build("oracle", warm) as later:
        assert later.context is warm.context


class CountingPlanner:
    name = "rules"

    def __init__(self, rules: RulePlanner) -> None:
        self.rules, self.calls = rules, 0

    def plan(self, question: str) -> Plan:
        self.calls += 1
        return self.rules.plan(question)


def test_the_hybrid_engine_answers_from_the_plan_it_made(mini_duckdb: str) -> None:
    context = StoreContext.open(mini_duckdb)
    planner = CountingPlanner(RulePlanner(context.index, context.reference, context.lexicon))
    rules = Engine.open(context, planner=planner)

    def no_agents() -> Engine:
        raise AssertionError("a question the rules plan must not reach the agents")

    with HybridEngine(rules, no_agents) as hybrid:  # type: ignore[arg-type]
        answer = hybrid.ask(QUESTION)
    assert planner.calls == 1
    assert answer.answer == Engine.open(mini_duckdb).ask(QUESTION).answer


def test_a_context_of_a_replaced_generation_refuses_new_connections(tmp_path: Path) -> None:
    db = str(tmp_path / "store.duckdb")
    csv = tmp_path / "mini.csv"
    shutil.copy(MINI_CSV, csv)
    ingest_path(csv, db, Month(2021, 12))
    context = StoreContext.open(db)
    with Engine.open(context):
        pass
    ingest_path(csv, db, Month(2021, 12))  # a new generation
    with pytest.raises(StaleContextError, match="re-ingested"):
        Engine.open(context)
    assert StoreContext.open(db).generation != context.generation
