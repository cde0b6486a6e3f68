"""`incidents`: the incident catalogue from the experiment files' `incident:` sections."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from harness.cli.terminal import EXIT_USAGE, fail
from harness.errors import ConfigError


def incidents(
    markdown: Annotated[
        bool,
        typer.Option(
            "--markdown", help="The catalogue table of docs/incidents.md (Markdown) on stdout."
        ),
    ] = False,
) -> None:
    """The incident catalogue: each claim, what our runs measured, what makes it safe."""
    from harness.report.catalogue import catalogue
    from harness.report.catalogue import markdown as as_markdown

    root = Path(__file__).resolve().parents[2]
    try:
        entries = catalogue(root)
    except ConfigError as exc:
        raise fail(EXIT_USAGE, str(exc)) from None
    if markdown:
        sys.stdout.write(as_markdown(entries))
        return
    out = Console(width=None if sys.stdout.isatty() else 160)
    for e in entries:
        out.rule(f"[bold]{e.name}[/bold]  {e.file}", align="left")
        out.print(f"[bold]claim[/bold]     {e.claim}", highlight=False)
        out.print(f"[bold]measured[/bold]  {e.measured or '-'}", highlight=False)
        out.print(f"[bold]safe[/bold]      {e.safe or '-'}", highlight=False)
        if e.calibrated:
            out.print(
                f"[bold]calibrated[/bold] {e.calibrated.removeprefix('calibrated ')}",
                highlight=False,
            )
