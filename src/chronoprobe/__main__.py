"""``python -m chronoprobe``: the same command line as ``chronoprobe``."""

from chronoprobe.cli.main import main

main()
