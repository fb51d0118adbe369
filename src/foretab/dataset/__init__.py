"""The QA dataset's format: one item per question with its gold answer and gold SQL.

``foretab bench build`` writes it and ``bench run`` scores against it; the LLM engines draw
their few-shot examples from it, so it lives beside the library, not in ``bench``.
"""

from foretab.dataset.items import DatasetError, QAItem, read_items, write_items

__all__ = ["DatasetError", "QAItem", "read_items", "write_items"]
