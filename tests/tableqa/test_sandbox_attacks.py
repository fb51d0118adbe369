"""The sandbox attack suite: every hostile program ends as a reported failure, nothing
outside the sandbox folder is read or written, no connection is made, no secret leaks, and
no process survives.

Two kinds of test: through ``run_code`` (the production path: AST check + OS layers), and
through ``run_os_layers_only`` (check and reduced builtins skipped) to show that the OS
layers contain a program the check would have missed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
import textwrap
import threading
from pathlib import Path

import pandas as pd
import pytest

from foretab.tableqa.sandbox import SandboxLimits, probe, run_code
from foretab.tableqa.sandbox.runner import run_os_layers_only, sandbox_processes

FAST = SandboxLimits(wall_s=6.0, cpu_s=4, memory_mb=1024, max_print_chars=2000)
DF = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})


def program(body: str, imports: str = "") -> str:
    return f"{imports}\ndef answer(df):\n{textwrap.indent(textwrap.dedent(body), '    ')}\n"


@pytest.fixture(scope="module")
def isolation():
    found = probe(FAST)
    assert found is not None, "the sandbox could not run a trivial program"
    return found


def assert_gone(result) -> None:
    if result.isolation is not None and result.isolation.uid not in (-1, 0, os.getuid()):
        assert sandbox_processes(result.isolation.uid) == []


# -- refused before running: (program, rule in the message) --------------------------------

REFUSED = {
    "open-read": (program("return open('/etc/passwd').read()"), "forbidden-name"),
    "open-write": (program("open('/tmp/pwned', 'w').write('x')"), "forbidden-name"),
    "os-system": (program("return os.system('id')", "import os"), "import"),
    "subprocess": (program("return subprocess.run(['id'])", "import subprocess"), "import"),
    "socket": (
        program("return socket.create_connection(('1.1.1.1', 80))", "import socket"),
        "import",
    ),
    "ctypes": (program("return ctypes.CDLL(None)", "import ctypes"), "import"),
    "importlib": (program("return importlib.import_module('os')", "import importlib"), "import"),
    "dunder-import": (program("return __import__('os').getcwd()"), "dunder"),
    "eval": (program("return eval('1+1')"), "forbidden-name"),
    "exec": (program("exec('x=1')\nreturn 1"), "forbidden-name"),
    "compile": (program("return compile('1', 'f', 'eval')"), "forbidden-name"),
    "getattr-dunder": (program("return getattr(df, '__class__')"), "forbidden-name"),
    "class-mro": (program("return df.__class__.__mro__"), "private-attribute"),
    "subclasses": (
        program("return ().__class__.__bases__[0].__subclasses__()"),
        "private-attribute",
    ),
    "format-dunder": (program("return '{0.__class__}'.format(df)"), "dunder"),
    "agg-by-dunder-name": (program("return df.agg('__class__')"), "dunder"),
    "read-csv-passwd": (program("return pd.read_csv('/etc/passwd')"), "forbidden-attribute"),
    "to-csv": (program("df.to_csv('/tmp/pwned.csv')\nreturn 1"), "forbidden-attribute"),
    "to-pickle": (program("pd.DataFrame.to_pickle(df, 'x.pkl')\nreturn 1"), "forbidden-attribute"),
    "read-pickle": (program("return pd.read_pickle('/tmp/x.pkl')"), "forbidden-attribute"),
    "np-load": (program("return np.load('/etc/passwd')"), "forbidden-attribute"),
    "np-fromfile": (program("return np.fromfile('/etc/passwd')"), "forbidden-attribute"),
    "np-ctypeslib": (program("return 1", "import numpy.ctypeslib"), "import"),
    "pandas-io": (program("return pd.io.common.os.getcwd()"), "forbidden-attribute"),
    "numpy-lib": (program("return np.lib.npyio"), "forbidden-attribute"),
    "pickle": (program("return pickle.loads(b'x')", "import pickle"), "import"),
    "signal": (program("signal.alarm(1)\nreturn 1", "import signal"), "import"),
    "sys-modules": (program("return sys.modules", "import sys"), "import"),
    "globals": (program("return globals()"), "forbidden-name"),
    "vars": (program("return vars()"), "forbidden-name"),
    "from-os": (program("return system('id')", "from os import system"), "import"),
    "from-pandas-read": (
        program("return read_csv('/etc/passwd')", "from pandas import read_csv"),
        "forbidden-attribute",
    ),
    "query-dunder": (program("return df.query('a.__class__')"), "private-attribute"),
    "eval-import": (program("return df.eval(\"__import__('os')\")"), "expression"),
    "query-non-literal": (program("q = 'a > 1'\nreturn df.query(q)"), "expression"),
    "breakpoint": (program("breakpoint()"), "forbidden-name"),
    "builtins-name": (program("return __builtins__"), "dunder"),
    "pathlib": (
        program("return pathlib.Path('/etc/passwd').read_text()", "import pathlib"),
        "import",
    ),
    "shutil": (program("shutil.rmtree('/tmp')", "import shutil"), "import"),
    "threading": (program("return threading.Thread", "import threading"), "import"),
    "multiprocessing": (program("return 1", "import multiprocessing"), "import"),
    "inspect-gc": (program("return gc.get_objects()", "import gc"), "import"),
    "relative-import": (program("return 1", "from . import secrets"), "import"),
    "urllib": (
        program("return urllib.request.urlopen('http://x')", "import urllib.request"),
        "import",
    ),
    "attrgetter": (
        program("return operator.attrgetter('mro')(type(df))", "import operator"),
        "forbidden-attribute",
    ),
    "style-to-html": (program("return df.style.to_html('/tmp/x.html')"), "forbidden-attribute"),
    "frame-escape": (program("g = (x for x in [1])\nreturn g.gi_frame.f_back"), "introspection"),
    "traceback-frame": (
        program("try:\n    1 / 0\nexcept Exception as e:\n    return e.__traceback__.tb_frame"),
        "introspection",
    ),
    "match-class-attr": (
        program("match df:\n    case object(__class__=c):\n        return c"),
        "private-attribute",
    ),
    "formatter-get-field": (
        program(
            "name = '0.' + '_' * 2 + 'class' + '_' * 2\nreturn string.Formatter().get_field(name, [df], {})",
            "import string",
        ),
        "forbidden-attribute",
    ),
    "type-hints-eval": (
        program(
            "def f(x: ('_' * 2 + 'import' + '_' * 2 + '(\"os\")')):\n    pass\nreturn typing.get_type_hints(f)",
            "import typing",
        ),
        "forbidden-attribute",
    ),
    "future-writer": (program("df.to_iceberg('/tmp/x')\nreturn 1"), "forbidden-attribute"),
    "future-reader": (program("return pd.read_iceberg('/etc/passwd')"), "forbidden-attribute"),
    "ndarray-dump": (program("df.values.dump('/tmp/x.npy')\nreturn 1"), "forbidden-attribute"),
    "dataclasses-exec": (program("return 1", "import dataclasses"), "import"),
    "no-function": ("import os\nos.system('id')\n", "import"),
    "syntax": ("def answer(df) return 1", "syntax"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_before_running(name) -> None:
    code, rule = REFUSED[name]
    result = run_code(code, DF, FAST)
    assert not result.ok
    assert result.failure is not None
    if rule is None:
        # Not a check refusal necessarily: it must still fail harmlessly.
        assert result.failure.kind in ("refused", "exception")
    else:
        assert result.failure.kind == "refused", result
        assert rule in result.failure.message
    assert result.isolation is None  # nothing was started


def test_a_correct_program_runs(isolation) -> None:
    result = run_code(program("return int(df['a'].sum())", "import pandas as pd"), DF, FAST)
    assert result.ok and result.value == 6
    assert_gone(result)


# -- contained while running (passes the check, hostile at run time) ----------------------


def test_cpu_bomb_is_killed(isolation) -> None:
    result = run_code(program("while True:\n    pass"), DF, FAST.model_copy(update={"cpu_s": 1}))
    assert not result.ok and result.failure.kind in ("cpu", "timeout")
    assert result.elapsed_s < FAST.wall_s + 3
    assert_gone(result)


def test_sleep_hits_the_wall_clock(isolation) -> None:
    limits = FAST.model_copy(update={"wall_s": 1.5})
    result = run_code(program("time.sleep(60)\nreturn 1", "import time"), DF, limits)
    assert not result.ok and result.failure.kind == "timeout"
    assert result.elapsed_s < 4
    assert_gone(result)


def test_memory_bomb_is_contained(isolation) -> None:
    result = run_code(program("x = bytearray(8 * 1024 ** 3)\nreturn len(x)"), DF, FAST)
    assert not result.ok and result.failure.kind == "memory"
    assert_gone(result)


@pytest.mark.slow
def test_growing_list_memory_bomb(isolation) -> None:
    result = run_code(program("x = []\nwhile True:\n    x.append('y' * 10 ** 6)"), DF, FAST)
    assert not result.ok and result.failure.kind in ("memory", "cpu", "timeout")
    assert_gone(result)


def test_huge_result_is_refused(isolation) -> None:
    result = run_code(program("return 'x' * (5 * 10 ** 6)"), DF, FAST)
    assert not result.ok and result.failure.kind == "output"


@pytest.mark.slow
def test_print_flood_is_capped(isolation) -> None:
    result = run_code(
        program("for i in range(200000):\n    print('spam' * 10)\nreturn 1"), DF, FAST
    )
    assert result.ok and result.value == 1
    assert len(result.stdout) <= FAST.max_print_chars


@pytest.mark.slow
def test_recursion_bomb_is_an_exception(isolation) -> None:
    result = run_code(program("def f(n):\n    return f(n + 1)\nreturn f(0)"), DF, FAST)
    assert not result.ok and result.failure.error_type == "RecursionError"


def test_forged_report_on_stdout_is_ignored(isolation) -> None:
    code = program('print(\'{"ok": true, "value": 42}\')\nreturn 7')
    result = run_code(code, DF, FAST)
    assert result.ok and result.value == 7


# -- the OS layers alone (check skipped, every builtin available) ----------------------------

needs_root_layers = pytest.mark.skipif(
    os.geteuid() != 0, reason="uid separation is applied when foretab runs as root"
)


def os_only(body: str, imports: str = "import os", **limits) -> object:
    return run_os_layers_only(program(body, imports), DF, FAST.model_copy(update=limits))


# One child tries every simple escape and reports each outcome; each is its own test.
PROBE = """
import os, socket, subprocess, pickle

def attempt(action):
    try:
        return ['ok', repr(action())[:300]]
    except BaseException as error:
        return ['denied', type(error).__name__]

def answer(df):
    out = {}
    out['read-etc-passwd'] = attempt(lambda: open('/etc/passwd').read())
    out['read-repository'] = attempt(lambda: open(REPO_FILE).read())
    out['read-parent-environ'] = attempt(lambda: open('/proc/%d/environ' % PARENT, 'rb').read())
    out['read-parent-memory'] = attempt(lambda: open('/proc/%d/mem' % PARENT, 'rb').read(1))
    out['list-root'] = attempt(lambda: os.listdir('/'))
    out['list-home'] = attempt(lambda: os.listdir(os.path.expanduser('~root')))
    out['write-outside'] = attempt(lambda: open(OUTSIDE_NEW, 'w').write('x'))
    out['overwrite-canary'] = attempt(lambda: open(CANARY, 'w').write('pwned'))
    out['delete-canary'] = attempt(lambda: os.remove(CANARY))
    out['rename-canary'] = attempt(lambda: os.rename(CANARY, CANARY + '.moved'))
    out['symlink-out'] = attempt(lambda: os.symlink('/etc/passwd', 'link') or open('link').read())
    out['hardlink-out'] = attempt(lambda: os.link(CANARY, 'hard'))
    out['tcp-loopback'] = attempt(lambda: socket.create_connection(('127.0.0.1', PORT), timeout=2))
    out['tcp-internet'] = attempt(lambda: socket.create_connection(('1.1.1.1', 80), timeout=2))
    out['udp-dns'] = attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('8.8.8.8', 53)))
    out['tcp-listen'] = attempt(lambda: socket.create_server(('0.0.0.0', 0)).getsockname())
    out['subprocess-shell'] = attempt(lambda: subprocess.run(['/bin/sh', '-c', 'id'], capture_output=True).stdout)
    out['exec-python'] = attempt(lambda: subprocess.run(['/usr/bin/python3', '-c', '1']).returncode)
    out['signal-parent'] = attempt(lambda: os.kill(PARENT, 15))
    out['setuid-root'] = attempt(lambda: os.setuid(0))
    out['setgid-root'] = attempt(lambda: os.setgid(0))
    out['chmod-canary'] = attempt(lambda: os.chmod(CANARY, 0o777))
    out['pickle-rce'] = attempt(lambda: pickle.loads(b"cos\\nsystem\\n(S'touch " + MARKER.encode() + b"'\\ntR."))
    out['environment'] = ['ok', sorted(os.environ)]
    return out
"""
SIMPLE_ESCAPES = [
    "read-etc-passwd", "read-repository", "read-parent-environ", "read-parent-memory",
    "list-root", "list-home", "write-outside", "overwrite-canary", "delete-canary",
    "rename-canary", "symlink-out", "hardlink-out", "tcp-loopback", "tcp-internet", "udp-dns",
    "tcp-listen",
    "subprocess-shell", "exec-python", "signal-parent", "setuid-root", "setgid-root",
    "chmod-canary",
]  # fmt: skip


@pytest.fixture(scope="module")
def escapes(isolation):
    # World-writable on purpose: file permissions would allow every attempt, so only the
    # sandbox's own layers (Landlock, the code check) stand in the way.
    folder = Path(tempfile.mkdtemp(prefix="foretab-outside-"))
    os.chmod(folder, 0o777)
    canary = folder / "canary.txt"
    canary.write_text("untouched")
    os.chmod(canary, 0o666)
    marker = folder / "pickled"
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    listener.settimeout(0.2)
    accepted: list[object] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            accepted.append(listener.accept())

    thread = threading.Thread(target=accept)
    thread.start()
    os.environ["FORETAB_LLM_API_KEY_CANARY"] = "sk-secret-canary"
    try:
        constants = {
            "REPO_FILE": str(Path(__file__).resolve()),
            "PARENT": os.getpid(),
            "OUTSIDE_NEW": str(folder / "new.txt"),
            "CANARY": str(canary),
            "MARKER": str(marker),
            "PORT": listener.getsockname()[1],
        }
        code = "\n".join(f"{k} = {v!r}" for k, v in constants.items()) + PROBE
        result = run_os_layers_only(code, DF, FAST)
    finally:
        del os.environ["FORETAB_LLM_API_KEY_CANARY"]
        thread.join()
        listener.close()
    assert result.ok, result
    yield {
        "outcomes": result.value,
        "result": result,
        "canary": canary,
        "folder": folder,
        "marker": marker,
        "accepted": accepted,
    }
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("name", SIMPLE_ESCAPES)
def test_os_layer_denies(escapes, name) -> None:
    status, detail = escapes["outcomes"][name]
    assert status == "denied", f"{name} succeeded: {detail}"


def test_os_layer_nothing_outside_changed(escapes) -> None:
    assert escapes["canary"].read_text() == "untouched"
    assert sorted(p.name for p in escapes["folder"].iterdir()) == ["canary.txt"]
    assert not escapes["marker"].exists()
    assert escapes["accepted"] == []
    assert escapes["canary"].stat().st_mode & 0o777 == 0o666
    assert_gone(escapes["result"])


def test_os_layer_environment_has_no_secret(escapes) -> None:
    _status, names = escapes["outcomes"]["environment"]
    assert "FORETAB_LLM_API_KEY_CANARY" not in names
    assert set(names) <= {"LC_ALL", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                          "MKL_NUM_THREADS", "NUMEXPR_MAX_THREADS"}  # fmt: skip
    assert "sk-secret-canary" not in escapes["result"].model_dump_json()


@pytest.mark.slow
def test_os_layer_own_folder_is_writable_and_removed(isolation) -> None:
    result = os_only("open('scratch.txt', 'w').write('x')\nreturn os.getcwd()")
    assert result.ok
    assert not Path(result.value).exists()


@needs_root_layers
def test_os_layer_runs_unprivileged(isolation) -> None:
    result = os_only("return [os.getuid(), os.geteuid(), os.getgroups()]")
    assert result.ok
    uid, euid, groups = result.value
    assert uid != 0 and euid != 0 and groups == []


def test_os_layer_fork_bomb_is_contained(isolation) -> None:
    body = """
    for _ in range(10000):
        try:
            if os.fork() == 0:
                while True:
                    pass
        except OSError:
            break
    return 'forked'
    """
    result = os_only(body, wall_s=2.0, cpu_s=1)
    assert_gone(result)


@needs_root_layers
def test_os_layer_escaped_session_is_killed(isolation) -> None:
    body = """
    if os.fork() == 0:
        os.setsid()
        time.sleep(600)
    return 'left a child'
    """
    result = os_only(body, "import os, time")
    # A run is one process now: the fork itself is refused, so no session can escape.
    assert not result.ok and result.failure.error_type == "BlockingIOError", result
    assert result.elapsed_s < 4
    assert_gone(result)


# -- one budget per run (issue 28, item 7): one process, one size-capped folder --------------


def test_os_layer_run_is_one_process(isolation) -> None:
    body = """
    out = {}
    for name, start in (("fork", os.fork), ("thread", lambda: threading.Thread(target=len, args=((),)).start()),
                        ("subprocess", lambda: subprocess.run(["/bin/true"]))):
        try:
            start()
            out[name] = "started"
        except BaseException as error:
            out[name] = type(error).__name__
    return out
    """
    result = os_only(body, "import os, subprocess, threading")
    assert result.ok, result
    assert "started" not in result.value.values(), result.value
    assert result.isolation.single_process
    assert_gone(result)


def test_os_layer_folder_total_is_capped(isolation) -> None:
    # 4 MiB files are under the 16 MiB per-file limit; 40 of them are not under the run's 8 MiB.
    body = """
    written = 0
    try:
        for i in range(40):
            with open(f"f{i}.bin", "wb") as handle:
                handle.write(b"0" * (4 * 1024 * 1024))
            written += 4
    except OSError as error:
        return ["stopped", error.errno, written]
    return ["wrote all", 0, written]
    """
    result = os_only(body, max_folder_mb=8)
    assert result.ok, result
    assert result.value[0] == "stopped" and result.value[1] == 28  # ENOSPC
    assert result.value[2] <= 8
    assert result.isolation.folder_mb == 8


def test_os_layer_file_count_is_capped(isolation) -> None:
    body = """
    try:
        for i in range(5000):
            open(f"n{i}", "w").close()
    except OSError as error:
        return ["stopped", error.errno, i]
    return ["made all", 0, 5000]
    """
    result = os_only(body, max_folder_files=100)
    assert result.ok and result.value[0] == "stopped" and result.value[2] <= 100, result


@pytest.mark.slow
def test_os_layer_big_file_in_own_folder_hits_the_size_limit(isolation) -> None:
    body = "open('big.bin', 'wb').write(b'0' * (64 * 1024 * 1024))\nreturn 'written'"
    result = os_only(body, max_file_mb=4)
    assert not result.ok and result.failure.kind in ("exception", "file_size", "memory")


def test_isolation_is_reported(isolation) -> None:
    # On this machine every layer is available; elsewhere a degraded layer is a warning.
    if isolation.warnings:
        pytest.skip(f"degraded isolation here: {isolation.warnings}")
    assert isolation.network.startswith("namespace")
    assert isolation.landlock_abi >= 1 and isolation.no_new_privs
