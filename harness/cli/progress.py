"""What a running cell shows on the terminal: one status line, refreshed, and its faults."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from harness.cli.terminal import console

if TYPE_CHECKING:
    from harness.runner.status import Status


class CellProgress:
    """One status line per cell, refreshed in place; faults printed as they happen."""

    def __init__(self) -> None:
        self.last = 0.0
        self.phase = ""

    def __call__(self, s: Status) -> None:
        for line in s.lines:
            console.print(f"  [yellow]{s.cell}[/yellow] {line}", highlight=False)
        s.lines.clear()
        now = time.monotonic()
        if s.phase != self.phase or now - self.last > 5:
            self.phase, self.last = s.phase, now
            console.print(
                f"  {s.cell} [cyan]{s.phase:<12}[/cyan] sent {s.attempted} acked {s.acked} "
                f"failed {s.failed} consumed {s.consumed}",
                highlight=False,
            )
