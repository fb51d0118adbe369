"""The synthetic demo corpus and the ``foretab demo`` walkthrough."""

from foretab.demo.generate import DemoError, generate_corpus

__all__ = ["DemoError", "generate_corpus"]
