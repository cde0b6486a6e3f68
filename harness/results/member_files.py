"""The files a consumer process appends to as it works, and their reader.

A member may be SIGKILLed at any moment, so it appends plain lines and flushes
after every batch; a torn last line is dropped when read. What a member has
flushed to its `consumed` file is, by definition, what it processed. The runner reads them
as Arrow tables (harness.results.member_tables); this module stays light (no pyarrow) for
the member processes that import it.
"""

from __future__ import annotations

import fcntl
import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, NamedTuple

from harness.results.consumers import ConsumerRef
from harness.results.events import CONSUMER_NOT_STARTED
from harness.results.history import now_ms


class ConsumedLine(NamedTuple):
    """One record a member processed: a line `seq,partition,offset,ts,generation` of its
    `<stem>.consumed.csv` (ts = when the batch holding it was processed, ms)."""

    seq: int
    partition: int
    offset: int
    ts: int
    generation: int

    def csv(self) -> str:
        return _csv(self)


class CommitLine(NamedTuple):
    """One commit a member saw succeed: a line `partition,offset,ts` of `<stem>.commits.csv`
    (offset = the next to read)."""

    partition: int
    offset: int
    ts: int

    def csv(self) -> str:
        return _csv(self)


class ShareLine(NamedTuple):
    """One delivery to a share-group member, or one acknowledgement the broker answered: a
    line `event,seq,partition,offset,delivery_count,ack,error,ts` of `<stem>.share.csv`.

    event `delivered` (delivery_count: the broker's count, 1 on the first delivery; ack and
    error empty) or `acked` (ack: accept | release | reject; error: empty when the broker
    took it, else the client's error name, e.g. INVALID_RECORD_STATE for a lock that had
    expired; delivery_count -1). ts: ms since the epoch when the member saw it."""

    event: str
    seq: int
    partition: int
    offset: int
    delivery_count: int
    ack: str
    error: str
    ts: int

    def csv(self) -> str:
        return ",".join(str(v).replace(",", ";") for v in self) + "\n"


DELIVERED, ACKED = "delivered", "acked"
ACK_TYPES = ("accept", "release", "reject", "renew")  # renew: refused renewals only

# The columns of the member CSV files, in file order (no header line).
CONSUMED_CSV: tuple[str, ...] = ConsumedLine._fields
COMMITS_CSV: tuple[str, ...] = CommitLine._fields
SHARE_CSV: tuple[str, ...] = ShareLine._fields


def _csv(row: tuple[int, ...]) -> str:
    return ",".join(str(v) for v in row) + "\n"


@dataclass(frozen=True)
class MemberPaths:
    directory: Path
    consumer: str  # "<set>/<member>"

    @property
    def stem(self) -> str:
        return ConsumerRef.parse(self.consumer).file_stem

    @property
    def consumed(self) -> Path:
        return self.directory / f"{self.stem}.consumed.csv"

    @property
    def commits(self) -> Path:
        return self.directory / f"{self.stem}.commits.csv"

    @property
    def share(self) -> Path:
        """A share-group member's deliveries and acknowledgements (ShareLine)."""
        return self.directory / f"{self.stem}.share.csv"

    @property
    def events(self) -> Path:
        return self.directory / f"{self.stem}.events.jsonl"

    @property
    def stderr(self) -> Path:
        return self.directory / f"{self.stem}.stderr.log"

    @property
    def pending(self) -> Path:
        """A pipeline member's batch between its commit call and its `consumed` lines."""
        return self.directory / f"{self.stem}.pending.csv"


class PendingBatch:
    """The `consumed` lines of a pipeline member's batch, written just before its
    commit_transaction and cleared once they are in `consumed`: a SIGKILL between a commit
    that landed and those lines leaves them here, for the member's next process to resolve
    (its records were processed if the group's committed offsets are past them)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self, lines: list[str]) -> None:
        with self.path.open("w", encoding="utf-8") as f:
            f.writelines(lines)

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)

    def read(self) -> list[ConsumedLine]:
        """The whole lines left (a line torn by the SIGKILL is dropped)."""
        if not self.path.exists():
            return []
        text = self.path.read_text(encoding="utf-8")
        whole = text.splitlines()[: text.count("\n")]
        return [line for line in map(parse_consumed, whole) if line is not None]


def parse_consumed(raw: str) -> ConsumedLine | None:
    """A `consumed` line's fields, or None for a line that is not one (torn, foreign)."""
    fields = raw.split(",")
    if len(fields) != len(ConsumedLine._fields) or not all(v.lstrip("-").isdigit() for v in fields):
        return None
    return ConsumedLine(*map(int, fields))


def not_yet_consumed(consumed: Path, lines: list[ConsumedLine]) -> list[ConsumedLine]:
    """The pending lines the `consumed` file does not end with already (a SIGKILL after the
    lines were appended but before the pending file was cleared, or halfway through them):
    compared by (seq, partition, offset, generation) with its last len(lines) lines."""
    if not lines or not consumed.exists():
        return lines
    with consumed.open("rb") as f:
        size = f.seek(0, 2)
        chunk, tail = 1 << 16, b""
        while tail.count(b"\n") <= len(lines) and len(tail) < size:
            start = max(0, size - len(tail) - chunk)
            f.seek(start)
            tail = f.read(size - len(tail) - start) + tail
    last = [parse_consumed(raw) for raw in tail.decode("utf-8", "replace").splitlines()]
    recent = {(r.seq, r.partition, r.offset, r.generation) for r in last[-len(lines) :] if r}
    return [ln for ln in lines if (ln.seq, ln.partition, ln.offset, ln.generation) not in recent]


def committed_past(lines: list[ConsumedLine], committed: dict[int, int]) -> bool:
    """Whether the group's committed offsets (partition -> next offset to read) are past
    every line's record: its transaction committed (or, after the partitions moved, another
    member committed past it; then this member's lines count it once more, as reprocessed,
    rather than not at all)."""
    return all(committed.get(line.partition, -1) > line.offset for line in lines)


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


def whole_lines(path: Path) -> list[str]:
    """The file's complete lines (a last line torn by a SIGKILL is dropped)."""
    return _complete_lines(path, 0)[0]


def read_json_lines(path: Path) -> list[dict[str, Any]]:
    """A process's event file: one JSON object per whole line; unreadable lines dropped."""
    events = []
    for line in whole_lines(path):
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return events


def read_events(paths: MemberPaths) -> list[dict[str, Any]]:
    return read_json_lines(paths.events)


def not_started(directory: Path, names: list[str]) -> dict[str, str]:
    """Members whose program could not be started (their last `consumer.not_started`): name
    -> its error."""
    out: dict[str, str] = {}
    for name in names:
        for e in read_events(MemberPaths(directory, name)):
            if e.get("kind") == CONSUMER_NOT_STARTED:
                out[name] = str(e.get("error") or "")
    return out
