"""Score a hand-written question set and print the issue-31 reading of each miss.

    PYTHONPATH=src python scripts/score_question_set.py --db /tmp/compose/corpus.duckdb \
        tests/fixtures/questions/analyst_compose.json [--misses misses.jsonl]

The store must be ingested with ``--reference-month 2021-12``; future months are answered
by the oracle (the real 2022 values), so every miss is a planning or analysis miss.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from foretab.bench.qa.question_set import load_set, miss_kind, score_item
from foretab.engine import Engine


def main() -> None:  # noqa: D103 - the module docstring says it
    parser = argparse.ArgumentParser()
    parser.add_argument("set", type=Path)
    parser.add_argument("--db", required=True)
    parser.add_argument("--misses", type=Path)
    args = parser.parse_args()
    items = load_set(args.set)
    with Engine.open(args.db, future="oracle") as engine:
        results = [score_item(item, lambda q: engine.ask(q).answer) for item in items]
    kinds = Counter(miss_kind(r) for r in results)
    print(f"{args.set.name}: {len(results)} questions")
    for kind in ("right", "different-question", "wrong-number", "refused-wrongly"):
        print(f"  {kind:20} {kinds[kind]}")
    if args.misses:
        with args.misses.open("w", encoding="utf-8") as out:
            for r in results:
                if r.outcome != "right":
                    row = {"family": r.item.family, "question": r.item.question,
                           "kind": miss_kind(r), "want": r.item.answer or r.item.refuse,
                           "got": r.got}  # fmt: skip
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
