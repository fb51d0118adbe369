"""``foretab serve --pin-cores``: each worker, its threads and its guard workers on one core."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from foretab.affinity import can_pin

pytestmark = pytest.mark.skipif(not can_pin(), reason="needs Linux's sched_setaffinity")


def _cores_of(pid: int, tid: int | None = None) -> frozenset[int]:
    """The cores a process (or one of its threads) may run on, as /proc lists them."""
    where = Path(f"/proc/{pid}") if tid is None else Path(f"/proc/{pid}/task/{tid}")
    for line in (where / "status").read_text().splitlines():
        if line.startswith("Cpus_allowed_list:"):
            cores: set[int] = set()
            for part in line.split(":", 1)[1].strip().split(","):
                first, _, last = part.partition("-")
                cores.update(range(int(first), int(last or first) + 1))
            return frozenset(cores)
    raise AssertionError(f"no Cpus_allowed_list in {where}/status")


def _threads_and_children(pid: int) -> tuple[list[frozenset[int]], list[int]]:
    """The cores of each thread of ``pid``, and its child processes."""
    threads, children = [], []
    for task in Path(f"/proc/{pid}/task").iterdir():
        threads.append(_cores_of(pid, int(task.name)))
        children += [int(c) for c in (task / "children").read_text().split()]
    return threads, children


#: A process that has a thread before it pins itself and starts a process after: it
#: prints the core it chose, each thread's cores and the child's (foretab.affinity only).
PINNED_CHILD = """
import json, subprocess, sys, threading
from foretab.affinity import pin_to_core
from tests.web.test_pinning import _cores_of, _threads_and_children
import os
stop = threading.Event()
before = threading.Thread(target=stop.wait)
before.start()
core = pin_to_core(int(sys.argv[1]))
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
threads, _ = _threads_and_children(os.getpid())
print(json.dumps([core, [sorted(t) for t in threads], sorted(_cores_of(child.pid))]))
child.kill(); child.wait(); stop.set(); before.join()
"""


def test_a_pinned_process_its_threads_and_its_later_children_share_one_core() -> None:
    usable = sorted(os.sched_getaffinity(0))
    worker = len(usable) + 1  # past the last core: round robin, to the second (if any)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", PINNED_CHILD, str(worker)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    core, threads, child = json.loads(done.stdout)
    assert core == usable[1 % len(usable)]
    assert len(threads) >= 2 and all(t == [core] for t in threads), threads
    assert child == [core]
    assert os.sched_getaffinity(0) == set(usable), "the test process itself is not pinned"


@pytest.mark.parametrize(
    ("args", "message"),
    [(("--workers", "1"), "needs --workers 2 or more")],
)
def test_pinning_one_worker_is_refused_with_the_fix(
    mini_duckdb: str, args: tuple[str, ...], message: str
) -> None:
    from typer.testing import CliRunner

    from foretab.cli.main import app, register_commands

    register_commands()
    result = CliRunner().invoke(
        app, ["serve", "--db", mini_duckdb, "--pin-cores", *args], env={"FORETAB_TOKEN": ""}
    )
    assert result.exit_code == 2 and message in " ".join(result.output.split())


@pytest.mark.slow
def test_pinned_workers_each_run_on_their_own_core_and_stay_pinned_after_a_restart(
    mini_duckdb: str, tmp_path: Path
) -> None:
    from tests.web.server import serve_process
    from tests.web.test_workers import QUESTION, WAIT_S, _workers_of

    usable = sorted(os.sched_getaffinity(0))
    log = tmp_path / "serve.log"
    args = ("--workers", "2", "--engines", "2", "--future", "none", "--pin-cores")
    with serve_process(mini_duckdb, *args, log_path=log) as (url, process):
        deadline = time.monotonic() + WAIT_S  # announced once both workers are warm
        while "one core each" not in log.read_text():
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        assert httpx.post(url + "/api/ask", json={"question": QUESTION}, timeout=30).is_success

        def cores_by_worker() -> list[frozenset[int]]:
            found = []
            for worker in _workers_of(process.pid):
                threads, guards = _threads_and_children(worker)
                assert len(guards) >= 2, "each engine has its guard worker"
                cores = {*threads, *(_cores_of(g) for g in guards)}
                assert len(cores) == 1 and len(next(iter(cores))) == 1, cores
                found.append(next(iter(cores)))
            return found

        first = sorted(min(cores) for cores in cores_by_worker())
        assert first == sorted([usable[0], usable[1 % len(usable)]])
        assert _cores_of(process.pid) == set(usable), "the supervisor is not pinned"

        # A worker that dies comes back on its core.
        killed = _workers_of(process.pid)[0]
        os.kill(killed, signal.SIGKILL)
        deadline = time.monotonic() + WAIT_S
        while True:
            workers = _workers_of(process.pid)
            try:
                if len(workers) == 2 and killed not in workers:
                    again = sorted(min(cores) for cores in cores_by_worker())
                    break
            except (AssertionError, OSError):  # the new worker is still starting its guards
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        assert again == first
