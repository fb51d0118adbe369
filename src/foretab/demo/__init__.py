"""The synthetic demo corpus: cities, districts, project names and seeded monthly prices.

Import ``foretab.demo.generate`` directly; this package stays light so the CLI starts
fast. The ``foretab demo`` walkthrough that ingests and questions it is ``foretab.cli.demo``.
"""
