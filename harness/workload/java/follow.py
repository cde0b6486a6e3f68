"""A Java client's stdout file, followed: whole lines from where it was last read, mapped
(harness.workload.java.events) into the files a librdkafka member writes.

The JVM writes its events straight into a file (its stdout), so what it printed before a
SIGKILL is kept; the runner maps them whenever it reads the member's files (a supervisor's
poll, its tables, its readiness), so every reader downstream sees the usual files.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.results.member_files import open_for_append


class Follower:
    """Hands each new whole line of `source` to `handle` (in order, once), from the runner's
    loop and the nemesis's restart threads alike."""

    def __init__(self, source: Path, handle: Callable[[list[str]], None]) -> None:
        self.source = source
        self.handle = handle
        self.position = 0
        self._lock = threading.Lock()

    def poll(self) -> None:
        with self._lock:
            self._poll()

    def _poll(self) -> None:
        if not self.source.exists():
            return
        with self.source.open("rb") as f:
            f.seek(self.position)
            data = f.read()
        end = data.rfind(b"\n")
        if end < 0:
            return
        self.position += end + 1
        self.handle(data[: end + 1].decode(errors="replace").splitlines())


def seal(path: Path) -> None:
    """Drop a dead process's torn last line (never read: not whole), so the next process's
    first line, appended to the same file, stands alone."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with path.open("rb+") as f:
            f.truncate(data.rfind(b"\n") + 1)


def append_events(path: Path, who: dict[str, str], events: list[dict[str, Any]]) -> None:
    """Events in the member's or incarnation's events file ({"ts", "kind", who, ...})."""
    if not events:
        return
    with open_for_append(path) as f:
        for e in events:
            f.write(json.dumps({"ts": e.get("ts", 0), "kind": e["kind"], **who, **e}) + "\n")
