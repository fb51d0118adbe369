"""Speed: warm and cold question latency, load on ``foretab serve``."""
