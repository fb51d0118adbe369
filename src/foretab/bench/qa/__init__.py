"""The QA benchmark: dataset builder, evaluation, metrics, report (ODTQA-FoRe, RETQA)."""
