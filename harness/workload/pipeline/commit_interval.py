"""The offsets an at-least-once member delivered and processed but has not committed yet.

Stream processors commit on an interval, not after every record (Kafka Streams'
commit.interval.ms, librdkafka's auto.commit.interval.ms): what a crash then writes again
is everything delivered since the last commit. `commit_interval_ms: 0` commits after each
batch, the smallest window.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping


class UncommittedOffsets:
    """Next offsets per partition, and whether a commit is due (clock in seconds, passed in)."""

    def __init__(self, interval_ms: int, now_s: float) -> None:
        self.interval_s = interval_ms / 1000
        self.last_commit_s = now_s
        self.offsets: dict[int, int] = {}

    def add(self, offsets: Mapping[int, int]) -> None:
        """A delivered batch's next offsets; a rewound partition keeps the furthest delivered."""
        for partition, offset in offsets.items():
            self.offsets[partition] = max(self.offsets.get(partition, -1), offset)

    def due(self, now_s: float) -> bool:
        return bool(self.offsets) and now_s - self.last_commit_s >= self.interval_s

    def take(self, partitions: Iterable[int] | None = None) -> dict[int, int]:
        """Remove and return these partitions' offsets (all when None), to commit them."""
        chosen = set(self.offsets) if partitions is None else set(partitions) & set(self.offsets)
        return {p: self.offsets.pop(p) for p in sorted(chosen)}

    def committed(self, now_s: float) -> None:
        self.last_commit_s = now_s

    def restore(self, offsets: Mapping[int, int]) -> None:
        """A commit that failed: its offsets wait for the next one."""
        self.add(offsets)
