"""Keeps a SIGSTOPped process group from outliving the runner that stopped it.

`python -m harness.workload.producer.pause_guard PGID MAX_S RUNNER_PID`

A stopped process cannot watch its parent, so while the nemesis holds the producer paused
this guard watches the runner instead: when the runner is gone (its pid is no longer this
process's parent) or MAX_S has passed, it sends SIGCONT to the group, and the producer,
running again, notices its own parent is gone and ends by itself. A normal resume stops
the guard with SIGTERM first (the runner sends SIGCONT itself).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time

POLL_S = 0.5


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    pgid, max_s, runner = int(args[0]), float(args[1]), int(args[2])
    parent = runner  # not os.getppid() read here: the runner may already be gone
    deadline = time.monotonic() + max_s
    while os.getppid() == parent and time.monotonic() < deadline:
        time.sleep(POLL_S)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGCONT)


if __name__ == "__main__":
    main()
