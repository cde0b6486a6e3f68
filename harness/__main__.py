"""`python -m harness`: the command line (harness.cli), as the `kafka-chaos` script runs it."""

from harness.cli import main

main()
