"""Guarded SQL: the one read-only path from untrusted or generated SQL to the history store.

``foretab.sql.guard.GuardedExecutor`` runs queries; ``foretab.sql.rules`` holds the AST
rules and their ids; ``foretab.sql.connect`` opens locked-down connections and manages the
PostgreSQL ``foretab_reader`` role. (Nothing is imported here, so that ``foretab.store``
can use ``foretab.sql.connect`` without an import cycle.)
"""
