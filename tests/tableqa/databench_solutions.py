"""Hand-written pandas answers to some DataBench questions (by id), right on both the full
and the sample tables; ``wrong`` turns each into a program with a wrong answer of the same
type. Used by the harness tests as a scripted model."""

from __future__ import annotations

import re

SOLUTIONS = {
    0: "return df['Age'].mean() > 35",
    1: "return df['BusinessTravel'].value_counts().idxmax() == 'Travel_Rarely'",
    3: "return df['DailyRate'].max() < 0",
    4: "c = df['Department'].value_counts()\n    return c['Research & Development'] > c['Sales']",
    9: "return df['JobRole'].value_counts().idxmax()",
    11: "return df['MaritalStatus'].value_counts().idxmin()",
    17: "return round(df['Age'].mean(), 2)",
    19: "return df['YearsAtCompany'].max()",
    21: "return int(df['DistanceFromHome'].sum())",
    26: "return df['PerformanceRating'].unique().tolist()",
    27: "return df['MonthlyIncome'].nsmallest(5).tolist()",
    32: "return df['Department'].value_counts().head(2).index.tolist()",
    33: "return df['MaritalStatus'].unique().tolist()",
    250: "return df['region'].value_counts().idxmax()",
    256: "return df['children'].mode()[0]",
    259: "return df['bmi'].max()",
    265: "return int((df['smoker'] == 'yes').sum())",
    267: "return df[df['bmi'] >= 40]['bmi'].nlargest(2).tolist()",
    271: "return df[df['age'] > 60]['smoker'].unique().tolist()",
}
# One of each answer type, for the fast harness tests (the slow one runs them all).
FAST_IDS = (3, 250, 21, 27, 271)

_WRONG = {
    "boolean": "not bool(value)",
    "number": "float(value) + 1",
    "category": "str(value) + ' (wrong)'",
    "list[number]": "[float(v) + 1 for v in value]",
    "list[category]": "[str(v) + ' (wrong)' for v in value]",
}


def right(qid: int) -> str:
    return f"```python\nimport pandas as pd\n\ndef answer(df):\n    {SOLUTIONS[qid]}\n```"


def wrong(qid: int, kind: str) -> str:
    return (
        "```python\nimport pandas as pd\n\ndef correct(df):\n"
        f"    {SOLUTIONS[qid]}\n\ndef answer(df):\n    value = correct(df)\n"
        f"    return {_WRONG[kind]}\n```"
    )


def question_of(body: dict) -> str:
    """The question inside an answer-generator prompt sent to the fake server."""
    prompt = body["messages"][-1]["content"]
    found = re.findall(r"^[Qq]uestion: (.*)$", prompt, re.MULTILINE)
    assert found, prompt
    return found[-1].strip()  # the last: the prompt's own spec also says "question: ..."
