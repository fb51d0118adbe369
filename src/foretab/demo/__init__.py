"""The synthetic demo corpus and the ``foretab demo`` walkthrough.

Import ``foretab.demo.generate`` / ``foretab.demo.run`` directly; this package stays light so
the CLI starts fast.
"""
