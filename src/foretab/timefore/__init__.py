"""The LLM engines: TimeFore's agents (Retriever, Forecaster, Analyzer) and the Vanilla baseline.

Each agent is a stage implementation (``foretab.core.stages``) talking to any
OpenAI-compatible server through ``foretab.llm``; ``foretab.engine.build_engine`` puts
them together. Prompts are package data in ``prompts/`` (the paper's Appendix E, dated for
the store's reference month).
"""
