"""The project's shared folder, ``../shared`` beside the checkout (data, papers, design).

It is not part of the repository: CI lays a copy beside the clone. Tests that need a file
of it skip where it is absent, with a message naming it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def missing(*parts: str) -> str:
    """The skip message for ``../shared/<parts>``."""
    where = SHARED.joinpath(*parts)
    return (
        f"needs ../shared/{'/'.join(parts)} (the project's shared folder beside the "
        f"checkout), not found at {where}"
    )


def shared_path(*parts: str) -> Path:
    """``../shared/<parts>``, or a skip naming it where it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(missing(*parts))
    return path
