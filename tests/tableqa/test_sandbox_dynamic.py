"""Dynamic evaluation and attribute lookup by name (issue 28, item 1).

The red-team's bypass: ``ev = pd.eval; ev("o." + "_" * 2 + "class" ...)`` reached
``object.__subclasses__()`` and from there ``os``. Attribute access is now an allowlist,
checked on the AST (``run_code``) and again at run time in the child
(``run_without_code_check`` skips the AST half to show the run-time half holds alone);
a missing kernel layer refuses to run code unless the caller accepts the risk.
"""

from __future__ import annotations

import textwrap

import pandas as pd
import pytest

from foretab.tableqa.sandbox import SandboxLimits, check_code, run_code
from foretab.tableqa.sandbox import runner as sandbox_runner
from foretab.tableqa.sandbox.runner import run_without_code_check
from tests.tableqa.databench_solutions import SOLUTIONS

FAST = SandboxLimits(wall_s=8.0, cpu_s=4, memory_mb=1024, max_print_chars=2000)
DF = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})
DUNDER = "'_' * 2"
# The payload: an aliased pd.eval fed a string built at run time.
ALIASED_EVAL = f"""
import pandas as pd

def answer(df):
    ev = pd.eval
    o = df
    return ev("o." + {DUNDER} + "class" + {DUNDER})  # before the fix: DataFrame's class
"""


def program(body: str, imports: str = "import pandas as pd") -> str:
    return f"{imports}\ndef answer(df):\n{textwrap.indent(textwrap.dedent(body), '    ')}\n"


BYPASSES = {
    "aliased-pd-eval": ALIASED_EVAL,
    "from-pandas-import-eval": program("return ev('1 + 1')", "from pandas import eval as ev"),
    "bound-query": program("q = df.query\nreturn q('a > 1')"),
    "bound-eval": program("e = df.eval\nreturn e('a + 1')"),
    "frame-class-eval": program("return pd.DataFrame.eval(df, 'a + 1')"),
    "getattr-alias": program("g = getattr\nreturn g(df, 'a')"),
    "getattribute": program(f"return df.__getattribute__({DUNDER} + 'class' + {DUNDER})"),
    "attrgetter": program("return attrgetter('a')(df)", "from operator import attrgetter"),
    "methodcaller": program("return operator.methodcaller('sum')(df)", "import operator"),
    "vars": program("return vars(df)"),
    "pandas-core": program("return pd.core.computation.eval.eval('1')"),
    "pd-api-module": program("return pd.api.types"),
    "unknown-attribute": program("return df.a.something_not_on_the_list"),
}


@pytest.mark.parametrize("name", sorted(BYPASSES))
def test_dynamic_evaluation_is_refused_by_the_check(name) -> None:
    result = run_code(BYPASSES[name], DF, FAST)
    assert not result.ok and result.failure is not None
    assert result.failure.kind == "refused", result
    assert result.isolation is None  # refused before a process started


# Programs the AST check cannot see through: the name is built at run time.
RUN_TIME = {
    "agg-by-built-name-query": program("return df.agg('qu' + 'ery', expr='a > 1')"),
    "apply-by-built-name-eval": program("return df.apply('ev' + 'al', expr='a + 1')"),
    "agg-numpy-load-by-name": program("return df['a'].agg('lo' + 'ad')"),
    "agg-dunder-by-name": program(f"return df.agg({DUNDER} + 'getattribute' + {DUNDER}, 'eval')"),
    "pivot-table-aggfunc": program(
        "return df.pivot_table(index='b', values='a', aggfunc='lo' + 'ad')"
    ),
    "format-attribute-field": program(
        f"return ('{{0.' + {DUNDER} + 'class' + {DUNDER} + '}}').format(df)"
    ),
    "str-format-unbound": program(
        f"return str.format('{{0.' + {DUNDER} + 'class' + {DUNDER} + '}}', df)"
    ),
    "format-nested-spec": program("return '{0:{1.real}}'.format(1, 2)"),
}


@pytest.mark.parametrize("name", sorted(RUN_TIME))
def test_dynamic_lookup_is_refused_at_run_time(name) -> None:
    code = RUN_TIME[name]
    check_code(code, columns=DF.columns)  # passes the AST check: only the run time sees it
    result = run_code(code, DF, FAST)
    assert not result.ok and result.failure is not None
    assert result.failure.kind == "refused", result
    assert result.failure.error_type == "SandboxViolation"


# The AST check skipped: the child's guard alone refuses each of these.
WITHOUT_CHECK = {
    **BYPASSES,
    "dunder-class": program("return df.__class__.__mro__"),
    "subclasses": program("return ().__class__.__bases__[0].__subclasses__()"),
    "module-io": program("return pd.io.common"),
    "np-lib": program("import numpy as np\nreturn np.lib.npyio", "import numpy"),
    "read-csv": program("return pd.read_csv('/etc/passwd')"),
    "frame-escape": program("g = (x for x in [1])\nreturn g.gi_frame"),
    "from-import-eval": program("return ev('1')", "from pandas import eval as ev"),
    "from-import-module": program("return c.eval", "from pandas.core.computation import eval as c"),
}


@pytest.mark.parametrize("name", sorted(WITHOUT_CHECK))
def test_run_time_guard_holds_without_the_check(name) -> None:
    result = run_without_code_check(WITHOUT_CHECK[name], DF, FAST)
    assert not result.ok and result.failure is not None, result
    assert result.failure.kind in ("refused", "exception"), result
    if result.failure.kind == "exception":
        # The reduced builtins stop it before the guard does (no getattr, no vars).
        assert result.failure.error_type in ("NameError", "ImportError"), result


# What generated pandas answers look like: they must keep working.
ORDINARY = {
    "value-counts": ("return df['b'].value_counts().idxmax()", "x"),
    "groupby-agg-names": ("return df.groupby('b')['a'].agg(['mean', 'sum']).shape[0]", 3),
    "agg-dict": ("return df.agg({'a': 'sum'})['a']", 6),
    "apply-lambda": ("return df['a'].apply(lambda v: v * 2).tolist()", [2, 4, 6]),
    "column-attribute": ("return int(df.a.max())", 3),
    "str-accessor": ("return int(df['b'].str.contains('y').sum())", 1),
    "dt-accessor": ("return int(pd.to_datetime(['2020-05-01']).year[0])", 2020),
    "numpy-where": ("import numpy as np\nreturn np.where(df['a'] > 1, 1, 0).tolist()", [0, 1, 1]),
    "format-spec": ("return '{:.2f}'.format(df['a'].mean())", "2.00"),
    "format-index": ("return '{0[a]}'.format({'a': 5})", "5"),
    "f-string": ("return f\"{df['a'].sum():,}\"", "6"),
    "counter": (
        "from collections import Counter\nreturn Counter(df['b']).most_common(1)[0][0]",
        "x",
    ),
    "offsets": (
        "return str(pd.Timestamp('2020-01-15') + pd.offsets.MonthEnd(0))[:10]",
        "2020-01-31",
    ),
    "pivot-table": (
        "return df.pivot_table(index='b', values='a', aggfunc='sum')['a'].tolist()",
        [1, 2, 3],
    ),
    "boolean-indexing": ("return df[df['a'] > 1]['b'].tolist()", ["y", "z"]),
}


@pytest.mark.parametrize("name", sorted(ORDINARY))
def test_ordinary_pandas_still_runs(name) -> None:
    body, expected = ORDINARY[name]
    result = run_code(program(body), DF, FAST)
    assert result.ok, result.failure
    assert result.value == expected


def test_databench_solutions_pass_the_check() -> None:
    columns = ["Age", "BusinessTravel", "DailyRate", "Department", "JobRole", "MaritalStatus",
               "YearsAtCompany", "DistanceFromHome", "PerformanceRating", "MonthlyIncome",
               "region", "children", "bmi", "smoker", "age"]  # fmt: skip
    for qid, body in SOLUTIONS.items():
        check_code(f"import pandas as pd\n\ndef answer(df):\n    {body}\n", columns=columns), qid


def test_query_refusal_tells_the_fixer_what_to_use() -> None:
    result = run_code(program("return df.query('a > 1')"), DF, FAST)
    assert not result.ok and "boolean indexing" in result.failure.message


# -- strict by default: a missing layer refuses, naming it and the flag ---------------------

LAYERS = {
    "network": "network namespace",
    "landlock": "Landlock",
    "uid": "fresh uid",
    "folder": "folder size",
}


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_missing_layer_refuses_by_default(layer, monkeypatch) -> None:
    monkeypatch.setattr(sandbox_runner, "_SIMULATE_MISSING", frozenset({layer}))
    code = program("return int(df['a'].sum())")
    result = run_code(code, DF, FAST)
    assert not result.ok and result.failure.kind == "isolation", result
    assert LAYERS[layer] in result.failure.message
    assert "--allow-weak-sandbox" in result.failure.message
    accepted = run_code(code, DF, FAST.model_copy(update={"strict": False}))
    assert accepted.ok and accepted.value == 6
    assert any(LAYERS[layer] in w for w in accepted.isolation.warnings)


def test_default_limits_are_strict() -> None:
    assert SandboxLimits().strict is True
