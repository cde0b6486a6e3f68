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
    """The incident catalogue: each claim, what our runs measured, what makes it safe; then
    the published Kafka bugs of experiments/bugs/, with the releases that have them and that
    fixed them (docs/bugs.md)."""
    from harness.report.bug_table import bug_entries
    from harness.report.catalogue import catalogue
    from harness.report.catalogue import markdown as as_markdown

    root = Path(__file__).resolve().parents[2]
    try:
        entries = catalogue(root)
        bugs = bug_entries(root)
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
    for b in bugs:
        out.rule(f"[bold]{b.bug.id}[/bold]  {b.file}", align="left")
        out.print(f"[bold]mechanism[/bold] {b.bug.mechanism}", highlight=False)
        out.print(
            f"[bold]affected[/bold]  {', '.join(b.bug.affected)}   "
            f"[bold]fixed[/bold] {', '.join(b.bug.fixed)}   [bold]status[/bold] {b.bug.status}",
            highlight=False,
        )
        runs = "; ".join(t.text() for t in b.tallies) or "not calibrated yet"
        out.print(f"[bold]our runs[/bold]  {runs}  ({b.bug.url})", highlight=False)
