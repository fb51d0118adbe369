"""The AST pre-check: generated code that reaches for more than a pandas answer needs.

Refused before it runs: files, network, processes, introspection, dunders.

This is the first of the sandbox's layers, not the only one: the child process is also
unprivileged, without network, confined by Landlock and resource limits, so a trick this
check misses still cannot reach the machine.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from foretab.errors import ForetabError

ALLOWED_MODULES = frozenset(
    {
        "pandas", "numpy", "math", "re", "datetime", "collections", "collections.abc",
        "statistics", "itertools", "functools", "operator", "string", "decimal", "fractions", "typing",
        "json", "heapq", "bisect", "random", "unicodedata", "calendar", "dateutil",
        "dateutil.parser", "dateutil.relativedelta", "time", "textwrap", "difflib", "copy",
        "numbers", "enum", "zoneinfo",
    }
)  # fmt: skip

FORBIDDEN_NAMES = frozenset(
    {
        "open", "eval", "exec", "compile", "__import__", "getattr", "setattr", "delattr",
        "hasattr", "globals", "locals", "vars", "dir", "input", "breakpoint", "help", "exit",
        "quit", "memoryview", "__builtins__",
        "__loader__", "__spec__", "copyright", "credits", "license", "reload",
    }
)  # fmt: skip

# Attributes that read or write files, reach the network, spawn processes, load native
# code or hand out modules; pandas/numpy names first, then module names that could be
# reached as attributes of other modules (``np.os``, ``pd.io``).
FORBIDDEN_ATTRIBUTES = frozenset(
    {
        # pandas / numpy I/O
        "read_csv", "read_table", "read_fwf", "read_excel", "read_json", "read_html",
        "read_xml", "read_parquet", "read_feather", "read_orc", "read_pickle", "read_hdf",
        "read_sql", "read_sql_query", "read_sql_table", "read_sas", "read_spss", "read_stata",
        "read_clipboard", "read_gbq", "to_csv", "to_excel", "to_json", "to_html", "to_xml",
        "to_parquet", "to_feather", "to_orc", "to_pickle", "to_hdf", "to_sql", "to_stata",
        "to_clipboard", "to_gbq", "to_latex", "to_markdown", "to_string", "ExcelFile",
        "ExcelWriter", "HDFStore", "load", "save", "savez", "savez_compressed", "loadtxt",
        "savetxt", "genfromtxt", "fromfile", "tofile", "memmap", "DataSource", "fromregex",
        "ctypeslib", "f2py", "distutils", "testing", "lib", "io", "compat", "core", "util",
        "plotting", "plot", "hist", "boxplot", "style", "savefig", "show_versions",
        "show_config", "set_printoptions", "seterrcall", "attrgetter", "methodcaller",
        "format_map", "__import__", "options", "set_option", "reset_option", "config",
        "dump", "Formatter", "get_field", "get_value", "vformat", "convert_field",
        "get_type_hints", "ForwardRef", "evaluate_forward_ref", "Template",
        # modules that other modules carry as attributes
        "os", "sys", "subprocess", "shutil", "socket", "pathlib", "builtins", "importlib",
        "ctypes", "pickle", "marshal", "signal", "threading", "multiprocessing", "tempfile",
        "glob", "posix", "inspect", "gc", "types", "code", "codeop", "runpy", "mmap",
        "resource", "fcntl", "pty", "select", "selectors", "asyncio", "http", "urllib",
        "ftplib", "smtplib", "webbrowser", "platform", "sysconfig", "site", "zipimport",
        "weakref", "linecache", "tracemalloc", "faulthandler", "atexit", "pydoc", "shelve",
        "dbm", "sqlite3", "zipfile", "tarfile", "gzip", "bz2", "lzma", "requests",
    }
)  # fmt: skip

# ``read_*`` / ``to_*`` are file I/O in pandas and numpy, except these conversions; a new
# reader or writer in a later pandas is refused without a list update.
_SAFE_TO = frozenset(
    {
        "to_list", "to_dict", "to_numpy", "to_frame", "to_period", "to_timestamp",
        "to_datetime", "to_numeric", "to_timedelta", "to_records", "to_series",
        "to_flat_index", "to_pydatetime", "to_pytimedelta", "to_offset", "to_julian_date",
        "to_tuples", "to_dense", "to_integral_value", "to_eng_string", "to_integral",
    }
)  # fmt: skip

# Frames, code objects, generators and tracebacks lead back to the runner's globals.
_INTROSPECTION_PREFIXES = ("f_", "gi_", "cr_", "ag_", "co_", "tb_")

# Methods that parse a string of their own (pandas' expression language): their literal
# argument is checked like code.
_EXPRESSION_METHODS = frozenset({"query", "eval"})


class CodeRefused(ForetabError):
    """Generated code broke a sandbox rule; ``rule`` names it, ``line`` locates it."""

    def __init__(self, rule: str, message: str, line: int | None = None) -> None:
        where = f" (line {line})" if line else ""
        super().__init__(f"code refused by the sandbox ({rule}){where}: {message}")
        self.rule = rule
        self.line = line

    def to_dict(self) -> dict[str, object]:
        data = super().to_dict()
        data.update(rule=self.rule, line=self.line)
        return data


@dataclass(frozen=True, slots=True)
class CheckedCode:
    """Code that passed the check, and the name of the function to call."""

    source: str
    function: str = "answer"


def check_code(source: str, function: str = "answer") -> CheckedCode:
    """Refuse ``source`` (``CodeRefused``) unless it passes every rule and defines ``function``."""
    try:
        tree = ast.parse(source, mode="exec")
    except SyntaxError as error:
        raise CodeRefused("syntax", f"{error.msg}", error.lineno) from None
    except (ValueError, RecursionError, MemoryError) as error:
        raise CodeRefused("syntax", f"cannot parse the code: {error}") from None
    _Checker().visit(tree)
    if not any(
        isinstance(node, ast.FunctionDef) and node.name == function and node.args.args
        for node in tree.body
    ):
        raise CodeRefused(
            "no-function",
            f"define a top-level function `def {function}(df):` that returns the answer",
        )
    return CheckedCode(source=source, function=function)


class _Checker(ast.NodeVisitor):
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            _check_module(alias.name, node.lineno)
            _check_alias(alias.asname, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            raise CodeRefused("import", "relative imports are not allowed", node.lineno)
        module = node.module or ""
        _check_module(module, node.lineno)
        for alias in node.names:
            if alias.name == "*":
                raise CodeRefused("import", f"'from {module} import *' is not allowed", node.lineno)
            full = f"{module}.{alias.name}"
            if full in ALLOWED_MODULES:
                continue
            _check_attribute(alias.name, node.lineno)
            _check_alias(alias.asname, node.lineno)

    def visit_Name(self, node: ast.Name) -> None:
        _check_identifier(node.id, node.lineno)
        if node.id in FORBIDDEN_NAMES:
            raise CodeRefused("forbidden-name", f"{node.id!r} is not available", node.lineno)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        _check_attribute(node.attr, node.lineno)
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        _check_identifier(node.name, node.lineno)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        _check_identifier(node.name, node.lineno)
        self.generic_visit(node)

    def visit_arg(self, node: ast.arg) -> None:
        _check_identifier(node.arg, node.lineno)
        self.generic_visit(node)

    def visit_keyword(self, node: ast.keyword) -> None:
        if node.arg is not None:
            _check_identifier(node.arg, getattr(node.value, "lineno", None))
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        # Dunder names in strings feed string-based lookups (str.format fields, pandas'
        # agg/apply by method name).
        value = node.value
        if isinstance(value, str | bytes) and (
            "__" in value if isinstance(value, str) else b"__" in value
        ):
            raise CodeRefused("dunder", "strings may not contain '__'", node.lineno)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _EXPRESSION_METHODS:
            expression = node.args[0] if node.args else None
            for keyword in node.keywords:
                if keyword.arg in ("expr", "expression"):
                    expression = keyword.value
            if expression is not None:
                _check_expression_string(expression, func.attr, node.lineno)
        self.generic_visit(node)

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        # ``case C(attr=x)`` reads ``attr`` like an attribute access does.
        for name in node.kwd_attrs:
            _check_attribute(name, node.lineno)
        self.generic_visit(node)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.name is not None:
            _check_identifier(node.name, node.lineno)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name is not None:
            _check_identifier(node.name, node.lineno)

    def visit_Global(self, node: ast.Global) -> None:
        for name in node.names:
            _check_identifier(name, node.lineno)

    visit_Nonlocal = visit_Global


def _check_module(name: str, line: int) -> None:
    if name not in ALLOWED_MODULES:
        allowed = ", ".join(sorted(m for m in ALLOWED_MODULES if "." not in m))
        raise CodeRefused("import", f"module {name!r} is not allowed (allowed: {allowed})", line)


def _check_alias(alias: str | None, line: int) -> None:
    if alias is not None:
        _check_identifier(alias, line)


def _check_identifier(name: str, line: int | None) -> None:
    if name.startswith("__"):
        raise CodeRefused("dunder", f"names starting with '__' ({name!r}) are not allowed", line)


def _check_attribute(name: str, line: int) -> None:
    if name.startswith(_INTROSPECTION_PREFIXES):
        raise CodeRefused(
            "introspection",
            f"attribute {name!r} (frames, code objects, tracebacks) is not allowed",
            line,
        )
    if name.startswith("_"):
        raise CodeRefused("private-attribute", f"attribute {name!r} is not allowed", line)
    if (
        name in FORBIDDEN_ATTRIBUTES
        or name.startswith("read_")
        or (name.startswith("to_") and name not in _SAFE_TO)
    ):
        raise CodeRefused(
            "forbidden-attribute",
            f"{name!r} is not allowed (no file, network, process or module access)",
            line,
        )


def _check_expression_string(expression: ast.expr, method: str, line: int) -> None:
    if not (isinstance(expression, ast.Constant) and isinstance(expression.value, str)):
        raise CodeRefused(
            "expression", f".{method}() needs a literal string (it is checked like code)", line
        )
    text = expression.value
    # pandas' syntax: `quoted names` and @local references; neither changes what is reachable.
    cleaned, inside, out = "", False, []
    for char in text:
        if char == "`":
            inside = not inside
            out.append("_q" if inside else "")
            continue
        out.append(("x" if char.isalnum() or char == " " else "_") if inside else char)
    cleaned = "".join(out).replace("@", "")
    try:
        tree = ast.parse(cleaned, mode="eval")
    except SyntaxError:
        raise CodeRefused(
            "expression", f"the .{method}() string is not an expression", line
        ) from None
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            _check_attribute(node.attr, line)
        elif isinstance(node, ast.Name):
            if node.id.startswith("__") or node.id in FORBIDDEN_NAMES:
                raise CodeRefused("expression", f"{node.id!r} is not allowed in .{method}()", line)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "__" in node.value:
            raise CodeRefused("dunder", "strings may not contain '__'", line)
