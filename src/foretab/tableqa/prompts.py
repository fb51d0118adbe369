"""The prompts of the LyS PRESTA pipeline (paper, Appendix A), adapted to our sandbox."""

from __future__ import annotations

from foretab.llm.untrusted import DATA_RULE, data_block, escape_data
from foretab.tableqa.preprocess import ColumnInfo

_ROLE = (
    "Role and Context\n"
    "You are a Python-powered Tabular Data Question-Answering System. Your core expertise "
    "lies in understanding tabular datasets and crafting Python scripts to generate precise "
    "solutions to user queries.\n"
)

_RULES = (
    "- Use the dataset and query as given, avoiding any external assumptions.\n"
    "- Adhere to strict syntax rules for Python, ensuring the code runs flawlessly without "
    "external modifications.\n"
    "- Retain the original column names of the dataset in your script.\n"
    f"- {DATA_RULE}\n"
)

_OUTPUT = (
    "Output Specification\n"
    "Return only the Python code of a function `def answer(df: pd.DataFrame)` that solves "
    "the query, excluding any introductory explanations or comments. The function must:\n"
    "- Include all essential imports (pandas, numpy and the standard library's math, re, "
    "datetime, collections, statistics are available).\n"
    "- Use only its `df` argument: do not read or write files or use the network.\n"
    "- Be concise and functional, ensuring the script can be executed without additional "
    "modifications.\n"
    "- Use the dataset and return a result of type number, categorical value, boolean "
    "value, or a list of values.\n"
)


def describe_columns(columns: tuple[ColumnInfo, ...], enhanced: bool) -> str:
    """Plain names (``ag``, ``ag+cs``) or one descriptive line per column (``+ecs``).

    Names and values are the table's: quoted as data (``foretab.llm.untrusted``).
    """
    if not enhanced:
        return data_block(str([c.name for c in columns]))
    return "<data>\n" + escape_data("\n".join(c.describe() for c in columns)) + "\n</data>"


def column_selector(question: str, columns: tuple[ColumnInfo, ...], enhanced: bool) -> str:
    """The column selector's prompt (paper §3); ``enhanced`` adds types and values."""
    listing = describe_columns(columns, enhanced)
    return (
        "You are an expert in tabular data analysis. Given the columns of a table and a "
        "question about it, select only the columns that are essential to answer the "
        f"question. {DATA_RULE}\n\n"
        f"Columns: {listing}\n\n"
        f"Question: {question}\n\n"
        "Return only a Python list of the column names, exactly as written above, e.g. "
        "['column a', 'column b']. No explanation."
    )


def answer_generator(question: str, columns: tuple[ColumnInfo, ...], enhanced: bool) -> str:
    """The answer generator's prompt (paper A.1)."""
    return (
        f"{_ROLE}\n"
        "Task Description\n"
        "Generate Python code to address a query based on the provided dataset. The output "
        f"must:\n{_RULES}\n"
        "Input Specification\n"
        "dataset: A Pandas DataFrame containing the data to be analyzed.\n"
        "question: A string outlining the specific query.\n\n"
        f"{_OUTPUT}\n"
        "Input:\n"
        f"column_names: {describe_columns(columns, enhanced)}\n"
        f"question: {question}\n"
    )


def code_fixer(
    question: str, columns: tuple[ColumnInfo, ...], code: str, error: str, enhanced: bool
) -> str:
    """The code fixer's prompt (paper A.3): the failing code and its error."""
    return (
        f"{_ROLE}\n"
        "Task Description\n"
        "Fix the Python code to address a query based on the provided dataset. The output "
        f"must:\n{_RULES}\n"
        "Input Specification\n"
        "code: The Python code that needs to be fixed.\n"
        "error: The error message that results from running the code.\n\n"
        f"{_OUTPUT}\n"
        f"column_names: {describe_columns(columns, enhanced)}\n"
        f"question: {question}\n\n"
        "Below is the piece of code that needs to be fixed, along with the error message that "
        f"results from running the code:\n{code}\n\nError: {data_block(error)}\n"
    )
