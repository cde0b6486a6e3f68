"""The truncations Kafka itself logged: each time a replica cut the tail off a partition's log,
read from the brokers' logs in the cell folder (brokers/<node id>.log).

A replica that learns it is behind a new leader truncates to the leader's end of its epoch,
and the log says so on the broker that did it, in the same form in 3.9 (log4j 1, class
kafka.log.UnifiedLog) and 4.x (log4j 2, org.apache.kafka.storage.internals.log.UnifiedLog);
before 3.0 the prefix is `[Log partition=...`:

    [2026-11-25 04:35:01,304] INFO [UnifiedLog partition=chaos-0, dir=/var/lib/kafka/data]
        Truncating to offset 831 (kafka.log.UnifiedLog)

UnifiedLog.truncateTo writes that line only when it removes records (its log end offset is
past the target); when there is nothing to remove it writes "Truncating to 831 has no
effect ...", which is not a truncation and is not matched. The fetcher's own line
("Truncating partition chaos-0 with TruncationState(offset=831, ...)") precedes both, so
it is not matched either. Times are the broker container's wall clock (the host's kernel
clock, UTC in the images), with millisecond resolution.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

_LINE = re.compile(
    r"^\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] \w+ "
    r"\[(?:Unified)?Log partition=(?P<tp>\S+), dir=[^\]]*\] "
    r"Truncating to offset (?P<offset>\d+)\b"
)
_NEEDLE = "Truncating to offset "


@dataclass(frozen=True)
class Truncation:
    """One replica's truncation of a partition: everything at `offset` and beyond removed."""

    broker: str  # the node's name (broker-<id>)
    ts: int  # epoch ms, the broker's clock
    topic: str
    partition: int
    offset: int
    line: str


def parse_line(line: str, broker: str) -> Truncation | None:
    """The truncation a log line reports, or None (any other line)."""
    if _NEEDLE not in line:
        return None
    m = _LINE.match(line)
    if m is None:
        return None
    topic, sep, part = m["tp"].rpartition("-")
    if not sep or not part.isdigit():
        return None
    when = datetime.strptime(m["ts"], "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=UTC)
    return Truncation(
        broker,
        int(when.timestamp() * 1000),
        topic,
        int(part),
        int(m["offset"]),
        line.rstrip("\n"),
    )


def truncations(lines: Iterable[str], broker: str) -> list[Truncation]:
    return [t for t in (parse_line(line, broker) for line in lines) if t is not None]


def node_name(log_file: Path) -> str:
    """brokers/<node id>.log is broker-<id>'s log (harness.nodes.topology names brokers so)."""
    return f"broker-{log_file.stem}" if log_file.stem.isdigit() else log_file.stem


def read_truncations(
    brokers_dir: Path, topic: str, skip: frozenset[str] = frozenset()
) -> list[Truncation]:
    """Every truncation of `topic`'s partitions the brokers logged, in time order, except
    those of the nodes in `skip` (e.g. a node whose clock a fault moved)."""
    found: list[Truncation] = []
    if not brokers_dir.is_dir():
        return found
    for path in sorted(brokers_dir.glob("*.log")):
        name = node_name(path)
        if name in skip:
            continue
        with path.open(encoding="utf-8", errors="replace") as f:
            found.extend(t for t in truncations(f, name) if t.topic == topic)
    return sorted(found, key=lambda t: (t.ts, t.broker))
