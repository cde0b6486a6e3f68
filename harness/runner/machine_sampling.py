"""The machine sampler beside a running cell (harness.common.machine_sampler), as a child
process of the runner: started before the cluster, stopped before the collect, its rows
then written as the cell's `machine.parquet` with containers named by their nodes."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable

from harness.common.machine_sampler import EVERY_S
from harness.common.processes import ManagedProcess
from harness.results.layout import CellPaths
from harness.results.machine import write_machine

STOP_GRACE_S = 2.0


class MachineSampler:
    def __init__(self, paths: CellPaths, max_s: float) -> None:
        self.paths = paths
        self._process = ManagedProcess(
            [
                sys.executable,
                "-m",
                "harness.common.machine_sampler",
                "--out",
                str(paths.machine_csv),
                "--every",
                str(EVERY_S),
                "--max-s",
                str(round(max_s)),
            ],
            stderr=paths.clients_log,
        )
        self._done = False

    def start(self) -> MachineSampler:
        self.paths.root.mkdir(parents=True, exist_ok=True)
        self._process.start()
        return self

    def stop(self, names: Callable[[], dict[str, str]]) -> int | None:
        """Stop sampling and write machine.parquet (once: a second call does nothing); the
        rows written, None when it had already been done or nothing could be written."""
        if self._done:
            return None
        self._done = True
        self._process.stop(STOP_GRACE_S)
        try:
            return write_machine(self.paths.machine_csv, self.paths.machine, names())
        except Exception:  # a torn last line, a full disk: the checks find no table
            return None
        finally:
            with contextlib.suppress(OSError):
                self.paths.machine_csv.unlink()
