"""``CallBudget``: a hard cap on LLM calls per question, shared by every stage and retry loop."""

from __future__ import annotations

import threading

from foretab.llm.errors import LLMBudgetExceeded


class CallBudget:
    """Counts calls; the call past ``max_calls`` raises ``LLMBudgetExceeded``.

    Cache hits count too, so a pipeline behaves the same with or without a cache.
    """

    def __init__(self, max_calls: int) -> None:
        if max_calls < 1:
            raise ValueError(f"max_calls must be at least 1, got {max_calls}")
        self.max_calls = max_calls
        self._used = 0
        self._lock = threading.Lock()

    @property
    def used(self) -> int:
        return self._used

    @property
    def remaining(self) -> int:
        return self.max_calls - self._used

    def spend(self, purpose: str = "") -> None:
        """Take one call from the budget or raise before anything is sent."""
        with self._lock:
            if self._used >= self.max_calls:
                what = f" (wanted one more for {purpose})" if purpose else ""
                raise LLMBudgetExceeded(
                    f"the question used its whole LLM call budget of {self.max_calls} "
                    f"calls{what}; raise max_calls_per_question in the LLM options "
                    "(config file key) if the model needs more"
                )
            self._used += 1
