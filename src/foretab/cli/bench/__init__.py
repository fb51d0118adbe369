"""The benchmark commands (``foretab bench forecast``, ``bench run``, ...), one module each."""
