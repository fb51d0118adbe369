"""The LyS PRESTA pipeline end to end: fake OpenAI server (real HTTP) → sandbox → typed answer."""

from __future__ import annotations

import pytest

from foretab.tableqa import AnswerType, SandboxLimits, TableQA, TableQAError
from foretab.tableqa.preprocess import clean_name, prepare

LIMITS = SandboxLimits(wall_s=20, cpu_s=10)


def fenced(body: str) -> str:
    return f"Here is the function:\n```python\nimport pandas as pd\n\ndef answer(df: pd.DataFrame):\n{body}\n```\nIt returns the answer."


def qa(fake_openai, pipeline: str, **options) -> TableQA:
    return TableQA(fake_openai.provider(**options), pipeline, limits=LIMITS)


def test_ag_boolean_answer_and_prompt(fake_openai, ibm_hr) -> None:
    fake_openai.reply(fenced("    return df['Age'].mean() > 35"))
    result = qa(fake_openai, "ag").ask(ibm_hr, "Is our average employee older than 35?")
    assert result.answer.type is AnswerType.BOOLEAN and result.answer.text == "True"
    assert len(fake_openai.requests) == 1
    prompt = fake_openai.requests[0]["messages"][0]["content"]
    assert "Is our average employee older than 35?" in prompt
    assert "'BusinessTravel'" in prompt and "def answer(df: pd.DataFrame)" in prompt
    assert "Travel_Rarely" not in prompt  # plain AG shows names only
    assert result.calls[0].usage.total_tokens == 19
    assert result.timings.total_s >= result.timings.execute_s > 0


def test_ag_cs_sends_only_the_selected_columns(fake_openai, ibm_hr) -> None:
    fake_openai.reply("['BusinessTravel', 'NoSuchColumn']")
    fake_openai.reply(fenced("    return df['BusinessTravel'].value_counts().idxmax()"))
    result = qa(fake_openai, "ag+cs").ask(ibm_hr, "What is the most frequent travel value?")
    assert result.columns == ("BusinessTravel",)
    assert result.answer.type is AnswerType.CATEGORY and result.answer.text == "Travel_Rarely"
    generator_prompt = fake_openai.requests[1]["messages"][0]["content"]
    assert "column_names: <data>['BusinessTravel']</data>" in generator_prompt
    assert "'Age'" not in generator_prompt


def test_ag_ecs_describes_enum_values(fake_openai, ibm_hr) -> None:
    fake_openai.reply("I would use ['Department'].")
    fake_openai.reply(fenced("    return int((df['Department'] == 'Sales').sum())"))
    result = qa(fake_openai, "ag+ecs").ask(ibm_hr, "How many employees work in sales?")
    assert result.answer.type is AnswerType.NUMBER and result.answer.value == 446
    for request in fake_openai.requests:
        assert "'Research & Development'" in request["messages"][0]["content"]


@pytest.mark.slow
def test_unreadable_selection_falls_back_to_all_columns(fake_openai, ibm_hr) -> None:
    fake_openai.reply("The age column, obviously.")
    fake_openai.reply(fenced("    return df['Age'].max()"))
    result = qa(fake_openai, "ag+cs").ask(ibm_hr, "What is the maximum age?")
    assert len(result.columns) == ibm_hr.shape[1]
    assert result.answer.value == 60


def test_fixer_recovers_a_failing_first_attempt(fake_openai, ibm_hr) -> None:
    fake_openai.reply("['Age']")
    fake_openai.reply(fenced("    return df['age'].nlargest(3).tolist()"))
    fake_openai.reply(fenced("    return df['Age'].nlargest(3).tolist()"))
    result = qa(fake_openai, "ag+ecs+cf").ask(ibm_hr, "What are the 3 highest ages?")
    assert [a.stage for a in result.attempts] == ["generate", "fix"]
    assert not result.attempts[0].ok and result.attempts[0].failure.error_type == "KeyError"
    assert result.answer.type is AnswerType.LIST_NUMBER and result.answer.text == "[60, 60, 60]"
    fixer_prompt = fake_openai.requests[2]["messages"][0]["content"]
    assert "df['age']" in fixer_prompt and "KeyError" in fixer_prompt


def test_fixer_gets_a_refusal_and_gives_up_after_n(fake_openai, ibm_hr) -> None:
    fake_openai.reply("['Age']")
    fake_openai.reply(fenced("    return pd.read_csv('/etc/passwd')"))
    fake_openai.reply(fenced("    import os\n    return os.listdir('/')"))
    with pytest.raises(TableQAError, match="generated code failed") as info:
        qa(fake_openai, "ag+ecs+cf").ask(ibm_hr, "List the files.")
    result = info.value.result
    assert [a.failure.kind for a in result.attempts] == ["refused", "refused"]
    assert "read_csv" in fake_openai.requests[2]["messages"][0]["content"]
    assert len(fake_openai.requests) == 3


@pytest.mark.slow
def test_no_fixer_outside_cf(fake_openai, ibm_hr) -> None:
    fake_openai.reply("['Age']")
    fake_openai.reply(fenced("    return df['nope'].sum()"))
    result = qa(fake_openai, "ag+ecs").run(ibm_hr, "What is the total?")
    assert result.answer is None and len(result.attempts) == 1
    assert "KeyError" in result.error


@pytest.mark.slow
def test_list_of_categories_from_prose_code(fake_openai, ibm_hr) -> None:
    fake_openai.reply(
        "import pandas as pd\ndef answer(df):\n    return df['Department'].unique().tolist()\n"
        "This lists the departments."
    )
    result = qa(fake_openai, "ag").ask(ibm_hr, "Which departments are there?")
    assert result.answer.type is AnswerType.LIST_CATEGORY
    assert set(result.answer.value) == {"Sales", "Research & Development", "Human Resources"}


def test_budget_ends_the_question(fake_openai, ibm_hr) -> None:
    fake_openai.reply("['Age']")
    fake_openai.reply(fenced("    return df['nope']"))
    result = qa(fake_openai, "ag+ecs+cf", max_calls_per_question=2).run(ibm_hr, "Q?")
    assert result.answer is None and "budget of 2" in result.error
    assert len(fake_openai.requests) == 2


@pytest.mark.slow
def test_server_failure_is_a_clear_error(fake_openai, ibm_hr) -> None:
    fake_openai.error(500).error(500)
    with pytest.raises(TableQAError, match="HTTP 500"):
        qa(fake_openai, "ag", max_retries=1).ask(ibm_hr, "Q?")


def test_clean_names_keep_the_mapping() -> None:
    import pandas as pd

    assert clean_name("🔥 Price (TK)\n") == "Price (TK)"
    frame, profile = prepare(pd.DataFrame({"🔥 a": [1], "a": [2], "b\u200b": ["x"]}))
    assert list(frame.columns) == ["a", "a_2", "b"]
    assert profile.renamed == {"a": "🔥 a", "a_2": "a", "b": "b\u200b"}
