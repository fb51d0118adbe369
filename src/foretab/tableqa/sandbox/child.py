# ruff: noqa: D101, D103, ANN001, ANN002, ANN003, ANN201, ANN202
"""The sandbox's child process. Standalone on purpose: run as ``python -I -B -c <this file>``.

It imports nothing from foretab. Order matters:
1. read the request (a JSON header line, then Parquet bytes) from stdin;
2. import the allowed modules and decode the table (while the files are still readable);
3. harden: a new network namespace, an unprivileged uid/gid with no groups, no new
   privileges, Landlock (files: read-only libraries, read-write own folder; no TCP;
   abstract sockets and signals scoped) — and report what was applied on the first line
   of stdout *before* any generated code runs;
4. lower the CPU limit to the request's ``cpu_s`` from here on, then run the generated
   code with a reduced builtins table, a guarded ``__import__``, every
   attribute read rewritten to a checked lookup (the allowlist again, at run time: no
   module outside the allowed ones, no dynamic evaluation entry point under any name) and
   pandas' own string evaluators (``pd.eval``, ``DataFrame.eval/query``) replaced;
5. write the result as one JSON line. Nothing is ever unpickled.
"""

import ast
import contextlib
import ctypes
import io
import json
import math
import os
import resource
import sys
import traceback

ALLOWED_MODULES = (
    "pandas", "numpy", "math", "re", "datetime", "collections", "statistics", "itertools",
    "functools", "operator", "string", "decimal", "fractions", "typing", "json", "heapq",
    "bisect", "random", "unicodedata", "calendar", "dateutil", "time", "textwrap", "difflib",
    "copy", "numbers", "enum", "zoneinfo", "collections.abc",
)  # fmt: skip
#: Submodules numpy and pandas import only on first use (``np.rec`` in ``to_records``,
#: ``np.char`` in ``describe``, ...), imported with the allowed modules: once the child has
#: dropped to its own uid it may not read the library files any more (a virtual
#: environment in a folder only its owner can read), and the lazy import would fail.
PRELOADED = (
    "numpy.rec", "numpy.char", "numpy.strings", "numpy.fft", "pandas.core.methods.to_dict",
    "pandas.core.reshape.reshape", "pandas.io.formats.string",
)  # fmt: skip
SAFE_BUILTINS = (
    "abs", "all", "any", "ascii", "bin", "bool", "bytearray", "bytes", "callable", "chr",
    "classmethod", "complex", "dict", "divmod", "enumerate", "filter", "float", "format",
    "frozenset", "hash", "hex", "id", "int", "isinstance", "issubclass", "iter", "len",
    "list", "map", "max", "min", "next", "object", "oct", "ord", "pow", "property", "range",
    "repr", "reversed", "round", "set", "slice", "sorted", "staticmethod", "str", "sum",
    "super", "tuple", "type", "zip", "__build_class__", "NotImplemented", "Ellipsis",
    "ArithmeticError", "AssertionError", "AttributeError", "Exception", "IndexError",
    "KeyError", "LookupError", "NameError", "NotImplementedError", "OverflowError",
    "RuntimeError", "StopIteration", "TypeError", "ValueError", "ZeroDivisionError",
    "ArithmeticError", "FloatingPointError", "UnicodeError", "Warning",
)  # fmt: skip

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
CLONE_NEWNS = 0x00020000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 1 << 14, 1 << 18
PR_SET_NO_NEW_PRIVS = 38
SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
LANDLOCK_RULE_PATH_BENEATH = 1
# Landlock filesystem rights by ABI version (linux/landlock.h).
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1, 2, 4, 8
FS_ABI1_ALL = (1 << 13) - 1
FS_REFER, FS_TRUNCATE, FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL = 1, 2

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


def _errno() -> str:
    return os.strerror(ctypes.get_errno())


def isolate_network(is_root: bool) -> str:
    if _libc.unshare(CLONE_NEWNET) == 0:
        return "namespace"
    if is_root:
        return "none: unshare(CLONE_NEWNET) failed: " + _errno()
    uid, gid = os.getuid(), os.getgid()
    if _libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0:
        return "none: no network namespace for an unprivileged user: " + _errno()
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                       ("gid_map", f"{gid} {gid} 1")):  # fmt: skip
        with open(f"/proc/self/{name}", "w") as handle:
            handle.write(text)
    return "namespace (user namespace)"


def private_folder(workdir: str, size_mb: int, files: int, uid: int, gid: int) -> str:
    """A new mount namespace with a size-capped tmpfs on the run's folder; "" when done.

    The folder's total (bytes and files) is then capped for the whole run, not per file;
    the tmpfs lives as long as the process and is never visible outside it.
    """
    if _libc.unshare(CLONE_NEWNS) != 0:
        return "unshare(CLONE_NEWNS) failed: " + _errno()
    if _libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        return "cannot make the mounts private: " + _errno()
    options = f"size={size_mb}m,nr_inodes={files},mode=0700,uid={uid},gid={gid}".encode()
    flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
    if _libc.mount(b"tmpfs", workdir.encode(), b"tmpfs", flags, options) != 0:
        return "cannot mount a tmpfs on the folder: " + _errno()
    os.chdir(workdir)  # the old cwd is the folder under the mount
    return ""


def drop_privileges(uid: int, gid: int) -> None:
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getuid() != uid or os.geteuid() != uid or os.getgid() != gid:
        raise OSError("could not drop privileges")


def landlock(read_paths: list, write_path: str) -> tuple:
    """Apply Landlock; returns (abi, note). abi 0 means not applied."""
    abi = _libc.syscall(SYS_LANDLOCK_CREATE_RULESET, None, 0, 1)
    if abi < 1:
        return 0, "Landlock unavailable: " + _errno()
    fs = FS_ABI1_ALL | (FS_REFER if abi >= 2 else 0) | (FS_TRUNCATE if abi >= 3 else 0)
    fs |= FS_IOCTL_DEV if abi >= 5 else 0
    attr = RulesetAttr(fs, NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0,
                       SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL if abi >= 6 else 0)  # fmt: skip
    size = 8 if abi < 4 else (16 if abi < 6 else 24)
    ruleset = _libc.syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), size, 0)
    if ruleset < 0:
        return 0, "Landlock ruleset refused: " + _errno()
    file_rights = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | (FS_TRUNCATE if abi >= 3 else 0)
    read_only = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
    rules = [(path, read_only) for path in read_paths]
    rules += [(write_path, fs), ("/dev/null", (FS_READ_FILE | FS_WRITE_FILE) & file_rights)]
    for path, rights in rules:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue
        if not os.path.isdir(path):
            rights &= file_rights
        rule = PathBeneathAttr(rights, fd)
        _libc.syscall(SYS_LANDLOCK_ADD_RULE, ruleset, LANDLOCK_RULE_PATH_BENEATH,
                      ctypes.byref(rule), 0)  # fmt: skip
        os.close(fd)
    if _libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0) != 0:
        os.close(ruleset)
        return 0, "Landlock restrict_self failed: " + _errno()
    os.close(ruleset)
    return int(abi), ""


def library_paths() -> list:
    import sysconfig

    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    paths.update(p for p in sysconfig.get_paths().values() if p)
    paths.update(p for p in sys.path if p and os.path.isdir(p))
    paths.update(("/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/local/lib",
                  "/usr/share/zoneinfo", "/etc/ld.so.cache", "/etc/localtime",
                  "/dev/urandom"))  # fmt: skip
    return sorted(p for p in paths if os.path.exists(p))


def harden(config: dict) -> dict:
    """Apply every layer; each one missing is a warning naming it (strict mode refuses)."""
    report = {"network": "", "uid": os.getuid(), "landlock_abi": 0, "no_new_privs": False}
    warnings = []
    skip = set(config.get("simulate_missing") or ())  # tests: act as if a layer were missing
    is_root = os.geteuid() == 0
    report["network"] = "none: simulated" if "network" in skip else isolate_network(is_root)
    if not report["network"].startswith("namespace"):
        warnings.append("network namespace: none (" + report["network"] + ")")
    uid = int(config["uid"]) if is_root and config.get("uid") is not None else os.getuid()
    gid = int(config["gid"]) if is_root and config.get("gid") is not None else os.getgid()
    folder = ("simulated" if "folder" in skip else private_folder(
        config["workdir"], int(config.get("max_folder_mb", 64)),
        int(config.get("max_folder_files", 1000)), uid, gid))  # fmt: skip
    report["folder_mb"] = 0 if folder else int(config.get("max_folder_mb", 64))
    if folder:
        warnings.append(f"folder size: no private tmpfs ({folder}); files are capped only "
                        "one by one")  # fmt: skip
    read_paths = library_paths()  # before dropping privileges: sys.path is fully known
    if is_root:
        try:
            drop_privileges(int(config["uid"]), int(config["gid"]))
        except (OSError, KeyError, TypeError, ValueError) as error:
            return {**report, "fatal": f"cannot leave root ({error}); refusing to run code"}
    report["uid"] = os.getuid()
    report["no_new_privs"] = _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
    if not report["no_new_privs"]:
        warnings.append("no-new-privileges: prctl failed (" + _errno() + ")")
    if "landlock" in skip:
        abi, note = 0, "Landlock unavailable: simulated"
    else:
        abi, note = landlock(read_paths, config["workdir"])
    report["landlock_abi"] = abi
    if note:
        warnings.append("Landlock: " + note + "; files are protected only by the code check "
                        "and the unprivileged user")  # fmt: skip
    elif abi < 4:
        warnings.append(f"Landlock: ABI {abi} cannot restrict TCP")
    if "uid" in skip or (not is_root and abi < 6):
        # A run as the caller's own uid relies on Landlock's signal scope (ABI 6) to keep
        # the code from signalling the caller's other processes.
        warnings.append(
            f"fresh uid: the code runs as the caller's uid {os.getuid()} (start "
            "foretab as root for a fresh uid per run, or use Landlock ABI 6+)"
        )
    report["single_process"] = single_process()
    if not report["single_process"]:
        warnings.append("one process: RLIMIT_NPROC could not be pinned; processes share "
                        "the limits one by one")  # fmt: skip
    report["warnings"] = warnings
    return report


def single_process() -> bool:
    """No more processes or threads from here on: the run's limits are one process's."""
    try:
        resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    except (OSError, ValueError):
        return False
    return True


class CappedText(io.StringIO):
    """stdout for the generated code: keeps the first ``cap`` characters."""

    def __init__(self, cap: int) -> None:
        super().__init__()
        self.cap = cap
        self.dropped = 0

    def write(self, text: str) -> int:
        room = self.cap - self.tell()
        if room > 0:
            super().write(text[:room])
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)


def jsonable(value, depth: int = 0):
    """Plain JSON values for whatever ``answer`` returned (pandas/numpy included)."""
    import numpy as np
    import pandas as pd

    if depth > 20:
        raise ValueError("the answer is nested too deeply")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, pd.DataFrame):
        if value.shape[1] == 1:
            return jsonable(value.iloc[:, 0].tolist(), depth + 1)
        return [jsonable(row, depth + 1) for row in value.itertuples(index=False, name=None)]
    if isinstance(value, (pd.Series, pd.Index, np.ndarray, pd.Categorical)):
        return [jsonable(v, depth + 1) for v in list(value)]
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v, depth + 1) for k, v in value.items()}
    if value is pd.NaT or value is pd.NA:
        return None
    if isinstance(value, (pd.Timestamp, np.datetime64)):
        return str(pd.Timestamp(value))
    if hasattr(value, "isoformat"):
        return value.isoformat()
    try:
        return float(value) if type(value).__name__ == "Decimal" else str(value)
    except Exception:
        return str(value)


class SandboxViolation(Exception):
    """The generated code reached for something the sandbox does not allow (at run time)."""


GUARD = "__sandbox_attr__"
CHECK_IMPORTED = "__sandbox_imported__"
# Methods that look a function up by its name when given a string (``df.agg('mean')``
# does ``getattr(df, 'mean')``, else ``getattr(np, 'mean')``): their string arguments are
# checked like attribute names.
DISPATCHERS = frozenset({"agg", "aggregate", "apply", "transform", "applymap",
                         "pivot_table", "crosstab"})  # fmt: skip
# Allowed as attributes only where these names are denied: strings looked up by pandas.
DENIED_PREFIXES = ("_", "read_", "f_", "gi_", "cr_", "ag_", "co_", "tb_")


class AttributeRewriter(ast.NodeTransformer):
    """``x.name`` (a read) -> ``__sandbox_attr__(x, 'name')``; ``from m import a`` re-checked."""

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load):
            return node
        call = ast.Call(ast.Name(GUARD, ast.Load()), [node.value, ast.Constant(node.attr)], [])
        return ast.copy_location(call, node)

    def visit_match_case(self, node):
        # Patterns must stay patterns (``case pd.NA:``); the code check covered their names.
        if node.guard is not None:
            node.guard = self.visit(node.guard)
        node.body = [self.visit(child) for child in node.body]
        return node

    def visit_ImportFrom(self, node):
        checks = [node]
        for alias in node.names:
            bound = alias.asname or alias.name
            call = ast.Call(
                ast.Name(CHECK_IMPORTED, ast.Load()),
                [ast.Name(bound, ast.Load()), ast.Constant(alias.name)],
                [],
            )
            checks.append(ast.Assign([ast.Name(bound, ast.Store())], call))
        return [ast.fix_missing_locations(ast.copy_location(n, node)) for n in checks]


def attribute_guard(allowed: frozenset, denied_names: frozenset, allowed_roots: frozenset):
    """The run-time half of the allowlist: ``(check_attribute, check_imported)``."""
    import builtins
    import operator
    import string
    import types
    import typing

    import pandas as pd

    real_getattr = builtins.getattr
    denied = [getattr(builtins, n) for n in ("eval", "exec", "compile", "getattr", "setattr",
              "delattr", "vars", "dir", "globals", "locals", "open", "__import__", "input",
              "breakpoint")]  # fmt: skip
    denied += [
        operator.attrgetter,
        operator.methodcaller,
        typing.get_type_hints,
        string.Formatter,
        string.Template,
        pd.eval,
        pd.DataFrame.eval,
        pd.DataFrame.query,
    ]
    denied_ids = frozenset(id(obj) for obj in denied)

    def refuse(what):
        raise SandboxViolation(f"{what} is not allowed in the sandbox")

    def dispatch_name_denied(text):
        return (
            text.startswith(DENIED_PREFIXES)
            or text in denied_names
            or (text.startswith("to_") and text not in allowed)
        )

    def check_dispatch_args(value, depth=0):
        if isinstance(value, str):
            if dispatch_name_denied(value):
                refuse(f"the function name {value!r}")
        elif depth < 4 and isinstance(value, (list, tuple, set, frozenset)):
            for item in value:
                check_dispatch_args(item, depth + 1)
        elif depth < 4 and isinstance(value, dict):
            for item in value.values():
                check_dispatch_args(item, depth + 1)

    def dispatcher(method):
        def checked(*args, **kwargs):
            for value in args:
                check_dispatch_args(value)
            for value in kwargs.values():
                check_dispatch_args(value)
            return method(*args, **kwargs)

        return checked

    def safe_format(template):
        def format_checked(*args, **kwargs):
            check_format_fields(template)
            return template.format(*args, **kwargs)

        return format_checked

    def check_value(value, name):
        if isinstance(value, types.ModuleType):
            if value.__name__.split(".")[0] not in allowed_roots:
                refuse(f"the module {value.__name__!r}")
            return value
        try:
            target = real_getattr(value, "__func__", value)
        except Exception:
            target = value
        if id(target) in denied_ids or id(value) in denied_ids:
            refuse(f"{name!r} (dynamic evaluation or attribute lookup by name)")
        if name in DISPATCHERS and callable(value):
            return dispatcher(value)
        return value

    def check_attribute(obj, name):
        if name not in allowed:
            refuse(f"the attribute {name!r}")
        if name == "format" and isinstance(obj, str):
            return safe_format(obj)
        if name == "format" and obj is str:
            return lambda template, *a, **k: safe_format(template)(*a, **k)
        return check_value(real_getattr(obj, name), name)

    def check_imported(value, name):
        if name not in allowed and not isinstance(value, types.ModuleType):
            refuse(f"importing {name!r}")
        return check_value(value, name)

    return check_attribute, check_imported


def check_format_fields(template, depth=0):
    """``str.format`` fields may index (``{0[k]}``) but never read attributes (``{0.x}``)."""
    import string

    if not isinstance(template, str) or depth > 2:
        return
    for _, field, spec, _ in string.Formatter().parse(template):
        if field is not None and "." in field:
            raise SandboxViolation(
                "attribute access inside a format string is not allowed "
                "in the sandbox; use an f-string"
            )
        if spec:
            check_format_fields(spec, depth + 1)


def disable_string_evaluation() -> None:
    """Pandas' expression language is eval by another name: gone before any code runs."""
    import pandas as pd
    import pandas.core.computation.eval as pandas_eval

    def unavailable(*args, **kwargs):
        raise SandboxViolation(
            "pandas eval/query are not available in the sandbox; use "
            "boolean indexing, e.g. df[df['a'] > 1]"
        )

    pd.eval = unavailable
    pandas_eval.eval = unavailable
    pd.DataFrame.eval = unavailable
    pd.DataFrame.query = unavailable
    with contextlib.suppress(Exception):
        pd.set_option("compute.use_numexpr", False)


def guarded_import(allowed_roots: frozenset):
    real_import = __import__

    def _import(name, globals=None, locals=None, fromlist=(), level=0):
        if level != 0 or name.split(".")[0] not in allowed_roots or name.startswith("_"):
            raise ImportError(f"import of {name!r} is not allowed in the sandbox")
        return real_import(name, globals, locals, fromlist, level)

    return _import


def run(request: dict, df, out) -> dict:
    printed = CappedText(int(request["max_print_chars"]))
    builtins_table = {name: getattr(__builtins__, name, None) if not isinstance(__builtins__, dict)
                      else __builtins__.get(name) for name in SAFE_BUILTINS}  # fmt: skip
    builtins_table = {k: v for k, v in builtins_table.items() if v is not None}
    builtins_table["__import__"] = guarded_import(
        frozenset(m.split(".")[0] for m in ALLOWED_MODULES)
    )
    builtins_table["print"] = lambda *a, **k: print(*a, **{**k, "file": printed})
    if request.get("os_layers_only"):
        # Test seam: prove the OS layers hold on their own, with every builtin available.
        builtins_table = (
            dict(vars(__builtins__)) if not isinstance(__builtins__, dict) else dict(__builtins__)
        )
    import numpy as np
    import pandas as pd

    namespace = {"__builtins__": builtins_table, "__name__": "answer_module", "pd": pd,
                 "np": np, "df": df}  # fmt: skip
    guarded = not request.get("os_layers_only")
    if guarded:
        roots = frozenset(m.split(".")[0] for m in ALLOWED_MODULES)
        check_attribute, check_imported = attribute_guard(
            frozenset(request["attributes"]), frozenset(request["denied_names"]), roots
        )
        namespace[GUARD], namespace[CHECK_IMPORTED] = check_attribute, check_imported
    sys.stdout = printed
    try:
        tree = ast.parse(request["code"], "<answer>", "exec")
        if guarded:
            tree = ast.fix_missing_locations(AttributeRewriter().visit(tree))
            disable_string_evaluation()
        code = compile(tree, "<answer>", "exec")
        exec(code, namespace)
        function = namespace.get(request.get("function", "answer"))
        if not callable(function):
            raise NameError("the code does not define a function answer(df)")
        value = function(df)
        result = {"ok": True, "value": jsonable(value), "value_type": _type_name(value)}
    except SandboxViolation as error:
        frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == "<answer>"]
        result = {"ok": False, "kind": "refused", "error_type": "SandboxViolation",
                  "message": str(error)[:2000],
                  "traceback": "".join(traceback.format_list(frames))[-4000:]}  # fmt: skip
    except MemoryError:
        result = {"ok": False, "kind": "memory", "error_type": "MemoryError",
                  "message": "the code ran out of memory", "traceback": ""}  # fmt: skip
    except BaseException as error:
        frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == "<answer>"]
        lines = "".join(traceback.format_list(frames))
        result = {"ok": False, "kind": "exception", "error_type": type(error).__name__,
                  "message": str(error)[:2000], "traceback": lines[-4000:]}  # fmt: skip
    finally:
        sys.stdout = sys.__stdout__
    result["stdout"] = printed.getvalue()
    return result


def _type_name(value) -> str:
    kind = type(value)
    module = kind.__module__
    return kind.__name__ if module == "builtins" else f"{module.split('.')[0]}.{kind.__name__}"


def limit_code_cpu(cpu_s: int) -> None:
    """Lower RLIMIT_CPU to the CPU used so far (rounded up) plus ``cpu_s``.

    The start had its own allowance; the generated code gets ``cpu_s``. Lowering a limit
    needs no privilege, so this works after the privileges were dropped.
    """
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = math.ceil(usage.ru_utime + usage.ru_stime) + cpu_s
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard - 1)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 1))


def main() -> None:
    raw = sys.stdin.buffer.read()
    header, _, data = raw.partition(b"\n")
    request = json.loads(header)
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)  # stray writes to fd 1 cannot corrupt the report
    for name in ALLOWED_MODULES + PRELOADED:
        with contextlib.suppress(ImportError):
            __import__(name)
    import pandas as pd

    df = pd.read_parquet(io.BytesIO(data))
    del raw, data
    report = harden(request)
    report["strict_failure"] = bool(request.get("strict")) and bool(report.get("warnings"))
    out.write(json.dumps({"isolation": report}) + "\n")
    out.flush()
    if "fatal" in report or report["strict_failure"]:
        return
    limit_code_cpu(int(request["cpu_s"]))
    try:
        result = run(request, df, out)
        text = json.dumps(result, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as error:
        text = json.dumps({"ok": False, "kind": "exception", "error_type": type(error).__name__,
                           "message": f"the answer cannot be returned as JSON: {error}",
                           "traceback": "", "stdout": ""})  # fmt: skip
    if len(text) > int(request["max_result_chars"]):
        text = json.dumps({"ok": False, "kind": "output", "error_type": "OutputTooLarge",
                           "message": f"the answer is {len(text)} characters of JSON, over the "
                           f"limit of {request['max_result_chars']}", "traceback": "",
                           "stdout": ""})  # fmt: skip
    out.write(text + "\n")
    out.flush()


def _start_worker(sock, request: dict, fds: list) -> None:
    """In the forked worker: take the pipes as stdio, a new session, the limits, then main()."""
    try:
        sock.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.closerange(3, 65536)
        os.setsid()
        os.chdir(request["workdir"])
        for which, soft, hard in request["rlimits"]:
            resource.setrlimit(which, (soft, hard))
        main()
    except BaseException:
        with contextlib.suppress(BaseException):
            traceback.print_exc()
        os._exit(70)
    os._exit(0)


def _recv_message(sock) -> tuple:
    """One length-prefixed JSON message and any file descriptors sent with it."""
    import socket

    head, fds, _, _ = socket.recv_fds(sock, 8, 3)
    if not head:
        return None, []
    while len(head) < 8:
        more = sock.recv(8 - len(head))
        if not more:
            return None, []
        head += more
    size = int.from_bytes(head, "big")
    body = b""
    while len(body) < size:
        chunk = sock.recv(size - len(body))
        if not chunk:
            return None, []
        body += chunk
    return json.loads(body), list(fds)


def zygote_main() -> None:
    """Pre-import pandas once, then fork one hardened worker per request.

    Forking a warm interpreter saves the imports each run would pay; every isolation step
    still happens in the worker, before the generated code runs. A worker's group is
    killed before the worker is reaped (and on the parent's request while it runs), so a
    group id is never signalled after it could have been reused.
    """
    import select
    import signal
    import socket

    sock = socket.socket(fileno=int(sys.argv[2]))
    for name in ALLOWED_MODULES + PRELOADED:
        with contextlib.suppress(ImportError):
            __import__(name)
    import pandas  # noqa: F401
    import pyarrow.parquet  # noqa: F401

    def send(message: dict) -> None:
        sock.sendall((json.dumps(message) + "\n").encode())

    def kill_group(pid: int) -> None:
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)

    children = set()
    while True:
        ready, _, _ = select.select([sock], [], [], 0.01)
        for pid in list(children):
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
                continue
            kill_group(pid)  # the zombie leader still holds the group id
            _, status = os.waitpid(pid, 0)
            children.discard(pid)
            send({"exit": pid, "returncode": os.waitstatus_to_exitcode(status)})
        if not ready:
            continue
        message, fds = _recv_message(sock)
        if message is None:
            for pid in children:
                kill_group(pid)
            return
        if message.get("op") == "kill":
            if int(message["pid"]) in children:
                kill_group(int(message["pid"]))
            continue
        pid = os.fork()
        if pid == 0:
            _start_worker(sock, message, fds)
        for fd in fds:
            os.close(fd)
        children.add(pid)
        send({"pid": pid})


if __name__ == "__main__":  # `python -c`: the sandbox; an import (tests) runs nothing
    if sys.argv[1:2] == ["--zygote"]:
        zygote_main()
    else:
        main()
