"""Sample questions asked at the end of ``foretab demo``."""

from __future__ import annotations

from rich.console import Console


def show_sample_questions(db: str, console: Console) -> None:
    """Ask a few sample questions of the demo store and print the answers.

    Deliberately empty for now: the question engine will ask sample questions here
    (a forecast for one project, a comparison, a historical lookup) once it exists.
    """
    del db, console
