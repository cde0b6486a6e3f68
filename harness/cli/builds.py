"""What the cells need built (broker images, Java and Spark jars, the Toxiproxy server) and
whether this machine has each: listed by `validate`, refused by `run` (exit 3)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from rich.markup import escape

from harness.cli.terminal import EXIT_INFRA, console, fail

if TYPE_CHECKING:
    from harness.spec import Cell


def print_builds(cells: Iterable[Cell]) -> None:
    """What the cells need built and whether this machine has each; missing ones with the
    commands that build them. The spec stays valid: `run` is what refuses (exit 3)."""
    from harness.suite import builds

    needs = builds.cells_need(cells)
    console.print("[bold]needs built[/bold] (on this machine):", highlight=False)
    commands = False  # the lines after "N missing; build them …" are its commands
    for line in builds.builds_listing(needs, builds.local_probes()):
        commands = commands or not line.startswith(" ")
        style = "yellow" if commands or line.endswith("MISSING") else None
        console.print(escape(line), style=style, highlight=False)


def refuse_unbuilt(cells: Iterable[Cell]) -> None:
    """Exit 3 before anything starts when something the cells need is not built (a broker
    image, Java or Spark jars, the Toxiproxy server), naming the commands that build it."""
    from harness.suite import builds

    missing = builds.missing_builds(builds.cells_need(cells), builds.local_probes())
    if missing:
        raise fail(EXIT_INFRA, "\n".join(missing))
