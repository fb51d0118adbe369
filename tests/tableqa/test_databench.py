"""DataBench: the official scorer's rules, and the harness end to end with a scripted model
(right code scores 100 %, wrong code 0 %)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from foretab.bench.tableqa.databench import load_questions, run_databench
from foretab.bench.tableqa.score import compare
from foretab.tableqa import SandboxLimits, TableQA
from tests.tableqa.databench_solutions import FAST_IDS, SOLUTIONS, question_of, right, wrong

# -- the scorer ---------------------------------------------------------------------------

CASES = [
    # booleans
    (True, "True", "boolean", True),
    ("[True]", "True", "boolean", True),
    (" true ", "True", "boolean", True),
    ("yes", "True", "boolean", True),
    ("n", "False", "boolean", True),
    ("False", "no", "boolean", True),
    ("True", "no", "boolean", False),
    (None, "True", "boolean", False),
    ("maybe", "True", "boolean", False),
    # categories: exact after stripping brackets/quotes, else as dates
    ("Barack Obama", "Barack Obama", "category", True),
    ("'Sales'", "Sales", "category", True),
    ("['Sales']", "Sales", "category", True),
    ("sales", "Sales", "category", False),
    ("2016-12-22 00:00:00+00:00", "2016-12-22", "category", True),
    ("Dec 22, 2016", "2016-12-22", "category", True),
    ("2016-12-22", "2016-12-23", "category", False),
    ("2016-13-45", "2016-12-22", "category", False),
    (123, "123", "category", True),
    # numbers: digits, '.', '-' only; truncated to 2 decimals
    ("125.0", "125", "number", True),
    (125, "125.0", "number", True),
    ("1.239", "1.23", "number", True),
    ("1.24", "1.23", "number", False),
    ("$1,234.56", "1234.56", "number", True),
    ("-3.5", "-3.5", "number", True),
    ("3.5", "-3.5", "number", False),
    ("invalid", "123.45", "number", False),
    (None, "123.45", "number", False),
    ("36.919", "36.92", "number", False),  # truncation, not rounding
    # list[category]: sets, same length, dates as dates
    ("['a', 'b', 'c']", "['c', 'b', 'a']", "list[category]", True),
    ("[a, b, c]", "['c', 'b', 'a']", "list[category]", True),
    ("['a', 'b']", "['a', 'b', 'c']", "list[category]", False),
    ("['a', 'a', 'b']", "['a', 'b', 'b']", "list[category]", True),  # sets, lengths equal
    ("['2023-01-01', '2023-01-02']", "['2023-01-02', '2023-01-01']", "list[category]", True),
    ("['2023-01-01T00:00:00Z']", "['2023-01-01']", "list[category]", True),
    ("[]", "[]", "list[category]", True),
    # list[number]: sorted sets of truncated numbers, same length
    ("[1, 2, 3]", "[3.0, 2.0, 1.0]", "list[number]", True),
    ("[25, 25, 25]", "[25, 25, 25]", "list[number]", True),
    ("[1.239, 2]", "[2, 1.23]", "list[number]", True),
    ("[1, 2]", "[1, 2, 3]", "list[number]", False),
    ("[1, x]", "[1, 2]", "list[number]", False),
    # null-likes equal only each other
    (None, None, "category", True),
    ("nan", "None", "number", True),
    ("", "[]", "list[number]", True),
    (None, "0", "number", False),
    ("nan", "Sales", "category", False),
    ("0", "nan", "number", False),
]


@pytest.mark.parametrize(("value", "truth", "semantic", "expected"), CASES)
def test_official_rules(value, truth, semantic, expected) -> None:
    assert compare(value, truth, semantic) is expected


def test_unknown_semantic_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown DataBench answer type"):
        compare("1", "1", "date")


def test_every_gold_answer_matches_itself(databench_dir) -> None:
    for question in load_questions(databench_dir):
        assert compare(question.answer, question.answer, question.type), question
        assert compare(question.sample_answer, question.sample_answer, question.type), question


# -- the harness with a scripted model ----------------------------------------------------


def scripted(databench_dir, make_reply):
    by_question = {
        q.question.strip(): q for q in load_questions(databench_dir) if q.id in SOLUTIONS
    }

    def respond(body: dict) -> str:
        question = by_question[question_of(body)]
        return make_reply(question)

    return respond


def harness(fake_openai, databench_dir, make_reply, ids, lite=False, pipeline="ag"):
    fake_openai.respond_with(scripted(databench_dir, make_reply))
    llm = fake_openai.provider()
    qa = TableQA(llm, pipeline, limits=SandboxLimits(wall_s=30, cpu_s=20))
    return run_databench(databench_dir, qa, lite=lite, ids=ids, workers=2)


def test_right_code_scores_100(fake_openai, databench_dir) -> None:
    report = harness(fake_openai, databench_dir, lambda q: right(q.id), FAST_IDS)
    assert report.n == len(FAST_IDS)
    assert report.accuracy == 100.0, [r for r in report.rows if not r.correct]
    assert set(report.by_type()) == {
        "boolean",
        "category",
        "number",
        "list[number]",
        "list[category]",
    }
    assert report.to_dict()["llm_calls"] == len(FAST_IDS) == len(fake_openai.requests)


def test_wrong_code_scores_0(fake_openai, databench_dir) -> None:
    report = harness(fake_openai, databench_dir, lambda q: wrong(q.id, q.type), FAST_IDS)
    assert report.accuracy == 0.0, [r for r in report.rows if r.correct]
    assert all(r.predicted is not None for r in report.rows)  # answered, just wrongly


@pytest.mark.slow
@pytest.mark.parametrize("lite", [False, True])
def test_every_solution_full_and_lite(fake_openai, databench_dir, lite) -> None:
    report = harness(fake_openai, databench_dir, lambda q: right(q.id), tuple(SOLUTIONS), lite=lite)
    assert report.accuracy == 100.0, [r for r in report.rows if not r.correct]


def test_missing_tables_are_skipped_and_wrong(fake_openai, databench_dir) -> None:
    worldbank = [
        q.id for q in load_questions(databench_dir) if q.dataset == "068_WorldBank_Awards"
    ][:2]
    report = harness(fake_openai, databench_dir, lambda q: right(q.id), worldbank)
    assert report.n == 2 and report.correct == 0
    assert all(r.skipped for r in report.rows) and fake_openai.requests == []


def test_cli_bench_databench_and_report(fake_openai, databench_dir, tmp_path) -> None:
    from foretab.cli.main import app, register_commands

    register_commands()
    fake_openai.respond_with(scripted(databench_dir, lambda q: right(q.id)))
    runs = []
    for pipeline in ("ag", "ag+ecs+cf"):
        out = tmp_path / f"{pipeline}.json"
        if pipeline != "ag":
            # The selector's reply comes first: it is answered with a column list.
            fake_openai.respond_with(
                lambda body: (
                    "['Age', 'BusinessTravel']"
                    if "select only the columns" in body["messages"][-1]["content"]
                    else right(
                        {q.question.strip(): q.id for q in load_questions(databench_dir)}[
                            question_of(body)
                        ]
                    )
                )
            )
        result = CliRunner().invoke(
            app,
            [
                "bench", "databench", "--data", str(databench_dir), "--limit", "1",
                "--pipeline", pipeline, "--json", str(out),
                "--llm-base-url", fake_openai.base_url, "--llm-model", fake_openai.model,
            ],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        data = json.loads(out.read_text())
        assert data["accuracy"] == 100.0 and data["n"] == 1
        runs.append(str(out))
    report = tmp_path / "report.md"
    result = CliRunner().invoke(app, ["bench", "report", *runs, "--out", str(report)])
    assert result.exit_code == 0, result.output
    text = report.read_text()
    assert "| ag |" in text and "| ag+ecs+cf |" in text and "100.00" in text
