"""Where every verb writes and how it ends: the stderr console, the exit codes (a contract,
docs/cli.md) and the one way a verb fails with a message."""

from __future__ import annotations

import sys

import typer
from rich.console import Console
from rich.markup import escape

# Not a terminal (CI, a log file): wide enough that the results table keeps its columns.
console = Console(stderr=True, width=None if sys.stderr.isatty() else 200)

EXIT_PASS, EXIT_FAIL, EXIT_USAGE, EXIT_INFRA = 0, 1, 2, 3
EXIT_INTERRUPTED = 130  # Ctrl-C, as shells report it


def fail(code: int, message: str) -> typer.Exit:
    """The exit to raise after printing `message` as an error."""
    # escaped: a message quotes what the user wrote, and `[/x]` in it is not rich markup
    console.print(f"[red]error:[/red] {escape(message)}", highlight=False)
    return typer.Exit(code)
