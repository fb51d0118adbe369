"""Sandboxed execution of generated pandas code: ``run_code(code, df) -> SandboxResult``."""

from foretab.tableqa.sandbox import zygote
from foretab.tableqa.sandbox.policy import (
    ALLOWED_MODULES,
    CheckedCode,
    CodeRefused,
    check_code,
)
from foretab.tableqa.sandbox.runner import (
    Isolation,
    SandboxFailure,
    SandboxLimits,
    SandboxResult,
    probe,
    run_code,
)

__all__ = [
    "ALLOWED_MODULES",
    "CheckedCode",
    "CodeRefused",
    "Isolation",
    "SandboxFailure",
    "SandboxLimits",
    "SandboxResult",
    "check_code",
    "probe",
    "run_code",
    "zygote",
]
