"""The files a consumer process appends to as it works, and their reader.

A member may be SIGKILLed at any moment, so it appends plain lines and flushes
after every batch; a torn last line is dropped when read. What a member has
flushed to its `consumed` file is, by definition, what it processed.
"""

from __future__ import annotations

import fcntl
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from harness.results.history import now_ms


@dataclass(frozen=True)
class MemberPaths:
    directory: Path
    consumer: str  # "<set>/<member>"

    @property
    def stem(self) -> str:
        return self.consumer.replace("/", "-")

    @property
    def consumed(self) -> Path:
        return self.directory / f"{self.stem}.consumed.csv"

    @property
    def commits(self) -> Path:
        return self.directory / f"{self.stem}.commits.csv"

    @property
    def events(self) -> Path:
        return self.directory / f"{self.stem}.events.jsonl"

    @property
    def stderr(self) -> Path:
        return self.directory / f"{self.stem}.stderr.log"


def open_for_append(path: Path) -> IO[str]:
    """Append mode; a line torn by an earlier SIGKILL is ended first so it stays alone."""
    f = path.open("a", encoding="utf-8")
    if path.stat().st_size > 0:
        with path.open("rb") as r:
            r.seek(-1, 2)
            if r.read(1) != b"\n":
                f.write("\n")
    return f


class EventLog:
    """A consumer process's own events (JSON lines, flushed one by one, read back into the
    cell's history); callable from several threads (Spark's listener writes too)."""

    def __init__(self, paths: MemberPaths) -> None:
        self.consumer = paths.consumer
        self._lock = threading.Lock()
        self._file = open_for_append(paths.events)

    def __call__(self, kind: str, **fields: Any) -> None:
        record = {"ts": now_ms(), "kind": kind, "consumer": self.consumer, **fields}
        with self._lock:
            self._file.write(json.dumps(record) + "\n")
            self._file.flush()


def next_generation(directory: Path, consumer_set: str) -> int:
    """Increment the set's generation counter, shared by its member processes."""
    path = directory / f"{consumer_set}.generation"
    with path.open("a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        text = f.read().strip()
        generation = int(text) + 1 if text else 1
        f.seek(0)
        f.truncate()
        f.write(str(generation))
        f.flush()
    return generation


def _complete_lines(path: Path, start: int) -> tuple[list[str], int]:
    """Whole lines from byte `start`, and the position after the last whole one."""
    if not path.exists():
        return [], start
    with path.open("rb") as f:
        f.seek(start)
        data = f.read()
    end = data.rfind(b"\n")
    if end < 0:
        return [], start
    return data[: end + 1].decode().splitlines(), start + end + 1


@dataclass
class ConsumedTail:
    """Follows one member's consumed file: counts and the highest offset per partition."""

    paths: MemberPaths
    position: int = 0
    rows: int = 0
    max_offset: dict[int, int] = field(default_factory=dict)

    def poll(self) -> None:
        lines, self.position = _complete_lines(self.paths.consumed, self.position)
        for line in lines:
            parts = line.split(",")
            if len(parts) != 5:
                continue
            partition, offset = int(parts[1]), int(parts[2])
            self.rows += 1
            if offset > self.max_offset.get(partition, -1):
                self.max_offset[partition] = offset


def read_consumed(paths: MemberPaths) -> list[tuple[int, int, int, int, int]]:
    """(seq, partition, offset, ts, generation) rows, torn lines dropped."""
    lines, _ = _complete_lines(paths.consumed, 0)
    rows = []
    for line in lines:
        parts = line.split(",")
        if len(parts) == 5:
            seq, part, off, ts, gen = (int(x) for x in parts)
            rows.append((seq, part, off, ts, gen))
    return rows


def read_commits(paths: MemberPaths) -> list[tuple[int, int, int]]:
    """(partition, offset, ts) of every commit the member saw succeed."""
    lines, _ = _complete_lines(paths.commits, 0)
    rows = []
    for line in lines:
        parts = line.split(",")
        if len(parts) == 3:
            part, off, ts = (int(x) for x in parts)
            rows.append((part, off, ts))
    return rows


def read_events(paths: MemberPaths) -> list[dict[str, Any]]:
    lines, _ = _complete_lines(paths.events, 0)
    events = []
    for line in lines:
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return events
