"""What an explore run may spend: trial cells, minutes, or both (whichever runs out first).

The clock is injected so that a test can spend minutes in no time; every cell an oracle
runs is counted, the trials' and the shrinker's alike.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Budget:
    cells: int | None = None  # None: no cell limit
    seconds: float | None = None  # None: no time limit
    clock: Callable[[], float] = time.monotonic
    spent: int = 0  # cells run so far
    reserved: int = 0  # cells kept back (for a shrink's confirmation): `reserve`
    started: float = field(init=False)

    def __post_init__(self) -> None:
        self.started = self.clock()

    def spend(self, cells: int = 1) -> None:
        self.spent += cells

    @property
    def elapsed_s(self) -> float:
        return self.clock() - self.started

    def exhausted(self, running: int = 0) -> bool:
        """No cell may start any more (the reserved cells, and `running`: cells started and
        not yet spent, kept back: with a time limit, as many times the mean cell so far)."""
        held = self.reserved + running
        if self.cells is not None and self.spent + held >= self.cells:
            return True
        if self.seconds is None:
            return False
        mean = self.elapsed_s / self.spent if self.spent else 0.0
        return self.elapsed_s + held * mean >= self.seconds

    @contextmanager
    def reserve(self, cells: int) -> Iterator[None]:
        """Keep `cells` back while inside: a shrink stops early enough that its schedule can
        still be confirmed (k runs) within the budget."""
        self.reserved += cells
        try:
            yield
        finally:
            self.reserved -= cells

    def describe(self) -> dict[str, float | int | None]:
        """For the summary: the limits and what was spent."""
        return {
            "cells": self.cells,
            "minutes": None if self.seconds is None else round(self.seconds / 60, 2),
            "cells_run": self.spent,
            "elapsed_s": round(self.elapsed_s, 1),
        }
