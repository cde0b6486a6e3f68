"""The offset files of a cell's client processes whose clock a planned fault may move.

Only the processes a spec plans a skew for run under libfaketime (`producer`,
`consumer:<set>/<i>`); each reads its own file in the cell folder, clocks/<process>.offset,
which the fault rewrites (harness.faults.clock). Every other process starts as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from harness.common import faketime
from harness.errors import ConfigError

CLOCKS_DIR = "clocks"


@dataclass(frozen=True)
class ClientClocks:
    directory: Path  # <cell>/clocks
    targets: frozenset[str]  # producer, consumer:<set>/<i>

    @classmethod
    def of(cls, cell_dir: Path, targets: Iterable[str]) -> ClientClocks:
        return cls(cell_dir / CLOCKS_DIR, frozenset(targets))

    def file_of(self, target: str) -> Path:
        """`consumer:group/0` -> clocks/consumer-group-0.offset."""
        return self.directory / (re.sub(r"[^A-Za-z0-9._-]", "-", target) + ".offset")

    def clock_file(self, target: str) -> Path:
        if target not in self.targets:
            raise ConfigError(f"{target} does not run with a fake clock in this cell")
        return self.file_of(target)

    def env(self, target: str) -> Callable[[], dict[str, str]] | None:
        """The environment maker of the process (None: it keeps the runner's own)."""
        if target not in self.targets:
            return None
        path = self.file_of(target)
        return lambda: faketime.environment(path)
