"""The garbage collector in a ``foretab ask`` process, which lives for one command.

Opening a store builds objects that live until the process exits (at 100x the corpus the
catalog's 30,592 rows, the entity index, the guard's table names, the model): a full
collection walks every one of them and frees nothing, and the interpreter runs one more
as it exits. At K = 100 that was ~1.3 s of a cold start's CPU (three full collections
while opening, 0.2 to 0.3 s each, and the one at exit). So ``foretab ask`` (the console
command only) collects nothing while it opens; what it built is then frozen (moved out of
the collector's reach; freed by reference counting as usual) and collection resumes for
the questions. Garbage only a collection frees (reference cycles) made while opening
stays until the process exits.
"""

from __future__ import annotations

import atexit
import gc

_paused = False


def pause_while_opening() -> None:
    """Collect nothing until ``resume_after_opening`` (the console ``foretab ask`` only)."""
    global _paused
    if not gc.isenabled():
        return
    gc.disable()
    _paused = True
    # The interpreter's last collection would walk everything the process holds, to exit.
    atexit.register(gc.freeze)


def resume_after_opening() -> None:
    """Freeze what opening built and collect again; nothing unless paused."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
