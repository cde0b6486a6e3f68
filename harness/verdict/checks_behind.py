"""A cell's checks run while the next cell's cluster starts, never while a workload runs.

The checks read only the cell's folder, so they need not hold up the next cell: they run in
a thread, first completing the folder (`before`: the cell's collect-behind, which decodes its
segment copies and removes its cluster), and the next cell, once its cluster and its steady
state are up, waits for them (its `checks-wait` phase) before its workload. The last cell's
checks run at once (nothing to hide them behind).

Cost is still told as it was spent: a cell's `timings.checks` and `collect_behind` stay their
own seconds, `timings.checks_hidden` says how many of both ran behind the next cell, and
`total` leaves those out (any wait for them is in the next cell's `checks_wait`), so the
cells' totals still add up to the run's wall time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.spec import Cell
from harness.verdict.cell_verdict import amend_timings
from harness.verdict.run_verify import SparkChecks

Summary = dict[str, Any]


class _Pending:
    def __init__(
        self, spark: SparkChecks, cell: Cell, cell_dir: Path, before: Callable[[], None] | None
    ) -> None:
        self.cell_dir = cell_dir
        self.summary: Summary | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(
            target=self._run,
            args=(spark, cell, cell_dir, before),
            name=f"checks-{cell.id}",
            daemon=True,
        )
        self.thread.start()

    def _run(
        self, spark: SparkChecks, cell: Cell, cell_dir: Path, before: Callable[[], None] | None
    ) -> None:
        try:
            if before is not None:
                before()
            self.summary = spark.verify(cell, cell_dir)
        except BaseException as exc:  # verify catches the checks' errors; this is the rest
            self.error = exc


class ChecksBehind:
    """Runs each cell's checks behind the next cell; `on_done` gets every summary, in the
    cells' order, in the caller's thread."""

    def __init__(self, spark: SparkChecks, on_done: Callable[[Summary], None]) -> None:
        self.spark = spark
        self.on_done = on_done
        self._pending: _Pending | None = None

    def run(
        self, cell: Cell, cell_dir: Path, last: bool, before: Callable[[], None] | None = None
    ) -> None:
        """The cell's checks (after `before`, which completes its folder): behind the next
        cell, or now for the last one."""
        self.drain()  # the previous cell's, if its successor never reached its barrier
        if last:
            if before is not None:
                before()
            self.on_done(self.spark.verify(cell, cell_dir))
        else:
            self._pending = _Pending(self.spark, cell, cell_dir, before)

    def barrier(self) -> None:
        """A cell's checks-wait: the Spark session up and the previous cell's checks done.
        Those ran behind this cell (the wait for them is this cell's own)."""
        self.spark.ready()
        self._finish(waited_outside=None)

    def idle(self) -> bool:
        """Whether `barrier` would return at once: the session up, no checks running. A cell's
        warm-up runs beside them and counts its windows only once they are done."""
        pending = self._pending
        return self.spark.started() and (pending is None or not pending.thread.is_alive())

    def drain(self) -> None:
        """The checks still running, waited for outside any cell (a cell that broke before
        its barrier, or Ctrl-C): that wait counts as the checked cell's own time again."""
        t0 = time.monotonic()
        if self._pending is not None:
            self._pending.thread.join()
        self._finish(waited_outside=time.monotonic() - t0)

    def _finish(self, waited_outside: float | None) -> None:
        pending, self._pending = self._pending, None
        if pending is None:
            return
        pending.thread.join()
        if pending.error is not None:
            raise pending.error
        assert pending.summary is not None
        self.on_done(_hidden(pending.summary, pending.cell_dir, waited_outside))


def _hidden(summary: Summary, cell_dir: Path, waited_outside: float | None) -> Summary:
    """The summary (and its summary.json) with `checks_hidden` set and `total` without it."""
    timings = summary.get("timings")
    if not isinstance(timings, dict):
        return summary
    behind = float(timings.get("checks") or 0.0) + float(timings.get("collect_behind") or 0.0)
    hidden = behind if waited_outside is None else max(0.0, behind - waited_outside)
    return amend_timings(summary, cell_dir, checks_hidden_s=hidden)
