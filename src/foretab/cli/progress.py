"""Progress bars: the long store stages (ingest, train, the demo's ingest) and counted runs.

Each stage reports ``(what it is on, done, total)``; the bar shows the stage's label, the
count, what it is on and the time so far, and disappears when the stage ends. A counted
run (``bench run``, DataBench) shows done / total and the time left, on standard error.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

StageUpdate = Callable[[str, int, int], None]


@contextlib.contextmanager
def stage_bar(label: str, console: Console) -> Iterator[StageUpdate]:
    """A transient bar; yields the callback the stage reports its progress to."""
    with Progress(
        TextColumn(f"[bold]{label}[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task("", total=None)

        def update(description: str, done: int, total: int) -> None:
            # A total of 0 means "not known yet": keep the bar indeterminate.
            bar.update(task, description=description, completed=done, total=total or None)

        yield update


def count_bar(label: str) -> Progress:
    """A transient bar over a counted run, on standard error (standard output stays data)."""
    return Progress(
        TextColumn(f"[bold]{label}[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    )
