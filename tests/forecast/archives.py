"""Model files taken apart and put back together, for tests that craft hostile ones."""

from __future__ import annotations

import io
import zipfile


def zip_members(data: bytes) -> dict[str, bytes]:
    """Every member of the zip ``data``, by name."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def zip_of(members: dict[str, bytes]) -> bytes:
    """The zip bytes holding ``members`` (name -> bytes)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return out.getvalue()
