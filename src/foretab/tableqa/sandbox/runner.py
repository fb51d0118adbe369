"""Run checked code on a DataFrame in a separate, locked-down Python process.

Layers, outermost first:
* a child ``python -I -B`` with an empty environment (a few fixed thread/locale settings,
  nothing of the parent's), its own temporary folder as cwd, a new session (process group);
* resource limits set before the child starts (address space, CPU seconds, open files,
  processes, file size, no core dumps; the CPU limit lowered to ``cpu_s`` when the code
  starts) and a wall-clock timeout that kills the whole group;
* inside the child, before any generated code: a new network namespace, a private
  size-capped tmpfs as its folder (``max_folder_mb`` and ``max_folder_files`` for the whole
  run, in a new mount namespace), an unprivileged uid/gid without groups (when started as
  root), no-new-privileges, Landlock, and RLIMIT_NPROC pinned to 0 so the run stays one
  process (no fork, no thread): the per-process limits are then the run's budget;
* the AST pre-check (``policy.check_code``) and a reduced builtins table;
* data in as Parquet bytes on stdin, the result back as one line of JSON.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import random
import resource
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from foretab.tableqa.sandbox import zygote
from foretab.tableqa.sandbox.policy import (
    FORBIDDEN_ATTRIBUTES,
    FORBIDDEN_NAMES,
    CodeRefused,
    allowed_attributes,
    check_code,
)

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger("foretab.sandbox")
_CHILD_SOURCE = (Path(__file__).with_name("child.py")).read_text(encoding="utf-8")
# Unprivileged ids for the child when foretab runs as root: a fresh one per run, so
# concurrent sandboxes cannot signal each other and each has its own process quota.
_UID_BASE, _UID_SPAN = 1_900_000_000, 100_000_000
# CPU seconds a child may spend before the generated code starts (see ``_rlimits``).
_START_CPU_S = 30
_CHILD_ENV = {
    "LC_ALL": "C.UTF-8",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_MAX_THREADS": "1",
}
# Tests only: layers the child skips as if this kernel lacked them (strict mode's test).
_SIMULATE_MISSING: frozenset[str] = frozenset()
ALLOW_WEAK_FLAG = "--allow-weak-sandbox"
_warned: set[str] = set()
_warn_lock = threading.Lock()

FailureKind = Literal[
    "refused", "exception", "timeout", "cpu", "memory", "file_size", "output", "crash", "isolation"
]


class SandboxLimits(BaseModel):
    """Limits of one run; ``strict`` refuses to run where an isolation layer is missing."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    wall_s: float = Field(30.0, gt=0)
    cpu_s: int = Field(20, ge=1)
    memory_mb: int = Field(2048, ge=256)
    max_open_files: int = Field(64, ge=16)
    max_processes: int = Field(32, ge=1)
    max_file_mb: int = Field(16, ge=0)
    # The run's folder as a whole (a private tmpfs): bytes and number of files.
    max_folder_mb: int = Field(64, ge=1)
    max_folder_files: int = Field(1000, ge=16)
    max_result_chars: int = Field(1_000_000, ge=1000)
    max_print_chars: int = Field(20_000, ge=0)
    # Strict by default: a missing isolation layer refuses to run generated code.
    strict: bool = True


class Isolation(BaseModel):
    """What the child applied before running the code (reported before the code ran)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    network: str = ""
    uid: int = -1
    landlock_abi: int = 0
    no_new_privs: bool = False
    folder_mb: int = 0  # the folder's size cap (0: none)
    single_process: bool = False  # no fork or thread after hardening
    warnings: tuple[str, ...] = ()
    fatal: str | None = None
    strict_failure: bool = False


class SandboxFailure(BaseModel):
    """Why a run produced no answer; ``message`` is what the code fixer shows the LLM."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: FailureKind
    error_type: str = ""
    message: str
    traceback: str = ""

    def describe(self) -> str:
        head = f"{self.error_type}: {self.message}" if self.error_type else self.message
        return f"{self.traceback}{head}".strip()


class SandboxResult(BaseModel):
    """The outcome of one run: a JSON value or a failure, with what was printed and timings."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ok: bool
    value: Any = None
    value_type: str = ""
    failure: SandboxFailure | None = None
    stdout: str = ""
    stderr: str = ""
    elapsed_s: float = 0.0
    isolation: Isolation | None = None


class _ChildResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ok: bool
    value: Any = None
    value_type: str = ""
    kind: FailureKind | None = None
    error_type: str = ""
    message: str = ""
    traceback: str = ""
    stdout: str = ""


def run_code(
    code: str, df: pd.DataFrame, limits: SandboxLimits | None = None, function: str = "answer"
) -> SandboxResult:
    """Check ``code``, run ``function(df)`` in the sandbox, return its JSON result."""
    started = time.perf_counter()
    try:
        checked = check_code(code, function, df.columns)
    except CodeRefused as refusal:
        return SandboxResult(
            ok=False,
            failure=SandboxFailure(
                kind="refused", error_type="CodeRefused", message=refusal.message
            ),
            elapsed_s=time.perf_counter() - started,
        )
    return _execute(checked.source, checked.function, df, limits or SandboxLimits(), started)


def run_os_layers_only(
    code: str, df: pd.DataFrame, limits: SandboxLimits | None = None
) -> SandboxResult:
    """Tests only: run without the AST check and reduced builtins.

    Proves that the OS layers alone contain hostile code. Never used on generated code.
    """
    return _execute(code, "answer", df, limits or SandboxLimits(), time.perf_counter(), True)


def run_without_code_check(
    code: str, df: pd.DataFrame, limits: SandboxLimits | None = None
) -> SandboxResult:
    """Tests only: skip the AST check, keep the child's run-time guard and builtins.

    Proves that the run-time half of the allowlist holds on its own.
    """
    return _execute(code, "answer", df, limits or SandboxLimits(), time.perf_counter())


def _execute(
    source: str,
    function: str,
    df: pd.DataFrame,
    limits: SandboxLimits,
    started: float,
    os_layers_only: bool = False,
) -> SandboxResult:
    payload = _payload(df)
    workdir = Path(tempfile.mkdtemp(prefix="foretab-sandbox-"))
    try:
        ids = _child_ids(workdir)
        header = {
            "code": source,
            "function": function,
            "os_layers_only": os_layers_only,
            "workdir": str(workdir),
            "uid": ids[0] if ids else None,
            "gid": ids[1] if ids else None,
            "strict": limits.strict,
            "max_folder_mb": limits.max_folder_mb,
            "max_folder_files": limits.max_folder_files,
            "attributes": sorted(allowed_attributes(df.columns)),
            "denied_names": sorted(FORBIDDEN_ATTRIBUTES | FORBIDDEN_NAMES),
            "simulate_missing": sorted(_SIMULATE_MISSING),
            "cpu_s": limits.cpu_s,
            "max_result_chars": limits.max_result_chars,
            "max_print_chars": limits.max_print_chars,
        }
        stdin = json.dumps(header).encode("utf-8") + b"\n" + payload
        outcome = _spawn(stdin, workdir, limits, ids[0] if ids else None)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return _interpret(outcome, limits, time.perf_counter() - started)


def _payload(df: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame = df.reset_index(drop=True)
    frame.columns = [str(c) for c in frame.columns]
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def _child_ids(workdir: Path) -> tuple[int, int] | None:
    if os.geteuid() != 0:
        return None
    uid = _UID_BASE + random.randrange(_UID_SPAN)
    os.chown(workdir, uid, uid)
    return uid, uid


def _rlimits(limits: SandboxLimits) -> list[tuple[int, int, int]]:
    """``(resource, soft, hard)`` for the child from its start.

    CPU: SIGXCPU at the soft limit, SIGKILL a second later. The start (a fresh interpreter
    and its pandas import, or a fork of the warm zygote; then decoding the table and
    hardening) has its own allowance, because on a slow or busy host a fresh start alone
    can take more than a small ``cpu_s``; the child lowers the limit to ``cpu_s`` of CPU
    from the moment the generated code starts (``child.limit_code_cpu``), so the code gets
    the same budget on both paths.
    """
    mib = 1024 * 1024
    start_cpu_s = limits.cpu_s + _START_CPU_S
    return [
        (resource.RLIMIT_AS, limits.memory_mb * mib, limits.memory_mb * mib),
        (resource.RLIMIT_CPU, start_cpu_s, start_cpu_s + 1),
        (resource.RLIMIT_NOFILE, limits.max_open_files, limits.max_open_files),
        (resource.RLIMIT_NPROC, limits.max_processes, limits.max_processes),
        (resource.RLIMIT_FSIZE, limits.max_file_mb * mib, limits.max_file_mb * mib),
        (resource.RLIMIT_CORE, 0, 0),
    ]


def _limits_preexec(limits: SandboxLimits) -> Any:
    settings = _rlimits(limits)

    def preexec() -> None:  # runs in the forked child: plain system calls only
        for which, soft, hard in settings:
            resource.setrlimit(which, (soft, hard))

    return preexec


class _Outcome(BaseModel):
    model_config = ConfigDict(extra="forbid")

    returncode: int
    stdout: bytes
    stderr: bytes
    timed_out: bool
    overflow: bool
    wall_s: float


def _spawn(stdin: bytes, workdir: Path, limits: SandboxLimits, uid: int | None) -> _Outcome:
    warm = zygote.get(_CHILD_SOURCE, _CHILD_ENV)
    if warm is not None:
        try:
            return _spawn_from_zygote(warm, stdin, workdir, limits, uid)
        except zygote.ZygoteUnavailable as error:
            log.warning("sandbox zygote unavailable (%s); starting a fresh process", error)
    return _spawn_process(stdin, workdir, limits, uid)


def _spawn_process(stdin: bytes, workdir: Path, limits: SandboxLimits, uid: int | None) -> _Outcome:
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-I", "-B", "-c", _CHILD_SOURCE],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=workdir,
        env=dict(_CHILD_ENV),
        close_fds=True,
        start_new_session=True,
        preexec_fn=_limits_preexec(limits),
    )
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    feed_fd = os.dup(process.stdin.fileno())  # _feed closes its own copy when done
    process.stdin.close()
    writer = threading.Thread(target=_feed, args=(feed_fd, stdin), daemon=True)
    writer.start()
    streams = _read_streams(
        process.stdout.fileno(), process.stderr.fileno(), started + limits.wall_s,
        limits, lambda: process.poll() is not None,
    )  # fmt: skip
    # Kill the whole group before reaping the leader, so the group id cannot be reused.
    _kill_group(process.pid)
    if uid is not None:
        _kill_uid(uid)
    try:
        returncode = process.wait(timeout=10)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL cannot be ignored
        process.kill()
        returncode = process.wait()
    writer.join(timeout=1)
    for stream in (process.stdout, process.stderr):
        with contextlib.suppress(OSError):
            stream.close()
    return _Outcome(returncode=returncode, wall_s=time.perf_counter() - started, **streams)


def _spawn_from_zygote(
    warm: zygote.Zygote, stdin: bytes, workdir: Path, limits: SandboxLimits, uid: int | None
) -> _Outcome:
    started = time.perf_counter()
    data_r, data_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        pid = warm.fork(
            {"workdir": str(workdir), "rlimits": _rlimits(limits)}, [data_r, out_w, err_w]
        )
    except zygote.ZygoteUnavailable:
        for fd in (data_r, data_w, out_r, out_w, err_r, err_w):
            os.close(fd)
        raise
    for fd in (data_r, out_w, err_w):
        os.close(fd)
    writer = threading.Thread(target=_feed, args=(data_w, stdin), daemon=True)
    writer.start()
    exited: list[int | None] = []

    def finished() -> bool:
        if not exited:
            code = warm.exit_code(pid, timeout=0)
            if code is not None:
                exited.append(code)
        return bool(exited)

    try:
        streams = _read_streams(out_r, err_r, started + limits.wall_s, limits, finished)
    finally:
        warm.kill(pid)
        if uid is not None:
            _kill_uid(uid)
        writer.join(timeout=1)
        for fd in (out_r, err_r):
            os.close(fd)
    returncode = exited[0] if exited else warm.exit_code(pid, timeout=10)
    return _Outcome(
        returncode=-signal.SIGKILL if returncode is None else returncode,
        wall_s=time.perf_counter() - started,
        **streams,
    )


def _read_streams(
    out_fd: int, err_fd: int, deadline: float, limits: SandboxLimits, finished: Any
) -> dict[str, Any]:
    """Read both pipes until EOF, the deadline, too much output, or the child has ended."""
    cap = limits.max_result_chars * 4 + 65_536
    out, err = bytearray(), bytearray()
    timed_out = overflow = False
    with selectors.DefaultSelector() as selector:
        selector.register(out_fd, selectors.EVENT_READ, out)
        selector.register(err_fd, selectors.EVENT_READ, err)
        open_streams = 2
        while open_streams:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                timed_out = True
                break
            for key, _ in selector.select(timeout=min(remaining, 0.1)):
                chunk = os.read(key.fd, 65_536)
                if not chunk:
                    selector.unregister(key.fileobj)
                    open_streams -= 1
                    continue
                key.data.extend(chunk)
                if len(out) > cap or len(err) > cap:
                    overflow = True
            if overflow:
                break
            if finished() and not selector.select(timeout=0):
                # The child is done; a descendant it left may hold the pipes open forever.
                break
    return {
        "stdout": bytes(out),
        "stderr": bytes(err[:20_000]),
        "timed_out": timed_out,
        "overflow": overflow,
    }


def _feed(fd: int, data: bytes) -> None:
    with contextlib.suppress(OSError):
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    with contextlib.suppress(OSError):
        os.close(fd)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _kill_uid(uid: int) -> None:
    """SIGKILL every live process of the run's own uid: also those that left the group."""
    for _ in range(50):
        found = False
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit() and _live_uid(entry) == uid:
                found = True
                with contextlib.suppress(OSError):
                    os.kill(int(entry.name), signal.SIGKILL)
        if not found:
            return
        time.sleep(0.01)


def _live_uid(proc_dir: Path) -> int | None:
    # /proc/PID is owned by root after a setuid, so read the real uid from its status.
    try:
        status = (proc_dir / "status").read_text()
    except OSError:
        return None
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    if fields.get("State", "").strip().startswith(("Z", "X")):
        return None
    try:
        return int(fields.get("Uid", "").split()[0])
    except (IndexError, ValueError):
        return None


def sandbox_processes(uid: int) -> list[int]:
    """Live processes of a sandbox uid (tests check that none survive a run)."""
    return [
        int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and _live_uid(p) == uid
    ]


def _interpret(outcome: _Outcome, limits: SandboxLimits, elapsed: float) -> SandboxResult:
    lines = outcome.stdout.decode("utf-8", "replace").splitlines()
    isolation = _isolation(lines[0] if lines else "")
    stderr = outcome.stderr.decode("utf-8", "replace")

    def failed(kind: FailureKind, message: str, error_type: str = "") -> SandboxResult:
        return SandboxResult(
            ok=False,
            failure=SandboxFailure(kind=kind, error_type=error_type, message=message),
            stderr=stderr[-4000:],
            elapsed_s=elapsed,
            isolation=isolation,
        )

    if outcome.timed_out:
        return failed(
            "timeout", f"the code did not finish within {limits.wall_s:g} s and was killed"
        )
    if outcome.overflow:
        return failed("output", "the code produced more output than allowed and was killed")
    if isolation is not None and isolation.fatal:
        return failed("isolation", isolation.fatal)
    if isolation is not None and isolation.strict_failure:
        return failed(
            "isolation",
            "the sandbox refuses to run generated code: isolation layer missing on this "
            f"machine: {'; '.join(isolation.warnings)}. Pass {ALLOW_WEAK_FLAG} "
            "(SandboxLimits(strict=False)) to accept the risk and run it anyway",
        )
    code = outcome.returncode
    if code < 0:
        sig = -code
        if sig == signal.SIGXCPU or (sig == signal.SIGKILL and outcome.wall_s >= limits.cpu_s):
            return failed("cpu", f"the code used more than {limits.cpu_s} s of CPU and was killed")
        if sig == signal.SIGXFSZ:
            return failed("file_size", f"the code wrote a file over {limits.max_file_mb} MB")
        return failed(
            "crash", f"the sandbox process was killed by signal {signal.Signals(sig).name}"
        )
    if len(lines) < 2:
        if "MemoryError" in stderr or "Cannot allocate memory" in stderr:
            return failed("memory", f"the code ran out of memory (limit {limits.memory_mb} MB)")
        tail = stderr.strip().splitlines()[-1:] or ["no output"]
        return failed(
            "crash", f"the sandbox process ended (exit {code}) without a result: {tail[0]}"
        )
    try:
        child = _ChildResult.model_validate_json(lines[1])
    except ValidationError:
        return failed("crash", "the sandbox process returned a malformed result")
    if not child.ok:
        kind = child.kind or "exception"
        if kind == "memory":
            message = f"the code ran out of memory (limit {limits.memory_mb} MB)"
        else:
            message = child.message
        return SandboxResult(
            ok=False,
            failure=SandboxFailure(
                kind=kind, error_type=child.error_type, message=message, traceback=child.traceback
            ),
            stdout=child.stdout,
            stderr=stderr[-4000:],
            elapsed_s=elapsed,
            isolation=isolation,
        )
    return SandboxResult(
        ok=True,
        value=child.value,
        value_type=child.value_type,
        stdout=child.stdout,
        stderr=stderr[-4000:],
        elapsed_s=elapsed,
        isolation=isolation,
    )


def _isolation(line: str) -> Isolation | None:
    try:
        report = json.loads(line)["isolation"]
        isolation = Isolation(**report)
    except (ValueError, KeyError, TypeError, ValidationError):
        return None
    for warning in isolation.warnings:
        with _warn_lock:
            if warning in _warned:
                continue
            _warned.add(warning)
        # Degraded isolation is logged once per process, never silently ignored.
        log.warning("sandbox isolation degraded: %s", warning)
    return isolation


def probe(limits: SandboxLimits | None = None) -> Isolation | None:
    """Run a trivial program and return the isolation the sandbox achieves on this machine."""
    import pandas as pd

    result = run_code("def answer(df):\n    return 1\n", pd.DataFrame({"a": [1]}), limits)
    return result.isolation
