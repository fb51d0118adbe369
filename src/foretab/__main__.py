"""``python -m foretab`` runs the CLI."""

from foretab.cli.main import main

main()
