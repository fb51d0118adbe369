"""Both ways a sandbox child starts — forked from the warm zygote (default) or as a fresh
process — apply the same isolation, and a dead zygote is replaced."""

from __future__ import annotations

import os

import pandas as pd
import pytest

from foretab.tableqa.sandbox import SandboxLimits, run_code, zygote
from foretab.tableqa.sandbox.runner import run_os_layers_only, sandbox_processes

DF = pd.DataFrame({"a": [1, 2, 3]})
LIMITS = SandboxLimits(wall_s=8, cpu_s=1)
READ_PASSWD = "def answer(df):\n    return open('/etc/passwd').read()\n"


@pytest.fixture(params=["zygote", "fresh process"])
def path(request):
    zygote.set_enabled(request.param == "zygote")
    yield request.param
    zygote.set_enabled(True)


@pytest.mark.slow_variant("fresh process")
def test_same_isolation_on_both_paths(path) -> None:
    ok = run_code("def answer(df):\n    return int(df['a'].sum())\n", DF, LIMITS)
    assert ok.ok and ok.value == 6
    assert ok.isolation is not None and ok.isolation.no_new_privs
    denied = run_os_layers_only(READ_PASSWD, DF, LIMITS)
    assert not denied.ok and denied.failure.error_type == "PermissionError"
    bomb = run_code("def answer(df):\n    while True:\n        pass\n", DF, LIMITS)
    assert not bomb.ok and bomb.failure.kind in ("cpu", "timeout")
    if bomb.isolation is not None and os.geteuid() == 0:
        assert sandbox_processes(bomb.isolation.uid) == []


CPU_AT_CODE_START = """\
def answer(df):
    import resource
    used = resource.getrusage(resource.RUSAGE_SELF)
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    return [soft - (used.ru_utime + used.ru_stime), hard - soft]
"""


@pytest.mark.slow_variant("fresh process")
def test_code_gets_its_whole_cpu_budget_on_both_paths(path) -> None:
    # The start (a fresh interpreter importing pandas, or a fork of the zygote) has its own
    # allowance: the code's budget is cpu_s from when it starts, however slow the start was.
    # Before, a fresh start's ~1 s of imports on a slow host used up a 1 s budget.
    limits = SandboxLimits(wall_s=30, cpu_s=2)
    result = run_os_layers_only(CPU_AT_CODE_START, DF, limits)
    assert result.ok, result.failure
    left, grace = result.value
    assert limits.cpu_s - 0.25 < left <= limits.cpu_s + 1
    assert grace == 1  # SIGXCPU at the soft limit, SIGKILL a second later


def test_a_dead_zygote_is_replaced() -> None:
    zygote.set_enabled(True)
    assert run_code("def answer(df):\n    return 1\n", DF, LIMITS).value == 1
    warm = zygote._instance
    assert warm is not None and warm.alive
    warm._process.kill()
    warm._process.wait()
    # The run in flight falls back to a fresh process or a new zygote; either way it works.
    assert run_code("def answer(df):\n    return 2\n", DF, LIMITS).value == 2
    assert run_code("def answer(df):\n    return 3\n", DF, LIMITS).value == 3
    assert zygote._instance is not warm and zygote._instance.alive
