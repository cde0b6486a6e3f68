"""The ISR of the workload's topic read from a history: the states the partition watch
recorded (`partition.state`), their shrinks and expands, and the summary's `isr` figures.

One definition for the summary (harness.verdict) and the timeline (harness.report). A
history is input: an event with a field of the wrong shape is left out, never a crash.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import pairwise
from typing import Any

from harness.results import events as ev
from harness.results.metrics import IsrFigures


@dataclass(frozen=True)
class PartitionSample:
    """One `partition.state` event: a partition's leader and ISR from then on."""

    ts: int
    topic: str
    partition: int
    leader: int | None
    isr: tuple[int, ...]
    replicas: tuple[int, ...]
    change: int = 0  # ISR size against this partition's previous sample: -1 shrank, +1 grew

    @property
    def key(self) -> tuple[str, int]:
        return self.topic, self.partition

    @property
    def under_replicated(self) -> bool:
        """Fewer replicas in sync than assigned."""
        return len(self.isr) < len(self.replicas)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _ints(value: object) -> tuple[int, ...] | None:
    if not isinstance(value, list):
        return None
    ints = [i for v in value if (i := _int(v)) is not None]
    return tuple(ints) if len(ints) == len(value) else None


def _sample(event: dict[str, Any]) -> PartitionSample | None:
    partition, isr, replicas = (
        _int(event.get("partition")),
        _ints(event.get("isr")),
        _ints(event.get("replicas")),
    )
    leader = event.get("leader")
    if partition is None or isr is None or replicas is None:
        return None
    if leader is not None and _int(leader) is None:
        return None
    topic = str(event.get("topic", ""))
    return PartitionSample(int(event["ts"]), topic, partition, leader, tuple(sorted(isr)), replicas)


def partition_samples(events: list[dict[str, Any]]) -> list[PartitionSample]:
    """Every well-formed `partition.state` event in time order, each with `change`: -1 when
    its ISR is smaller than its partition's previous sample's, +1 when larger, else 0 (the
    first sample of a partition, a leader change, an ISR of the same size)."""
    previous: dict[tuple[str, int], PartitionSample] = {}
    samples: list[PartitionSample] = []
    for event in sorted(events, key=lambda e: e["ts"]):
        if event.get("kind") != ev.PARTITION_STATE:
            continue
        sample = _sample(event)
        if sample is None:
            continue
        before = previous.get(sample.key)
        if before is not None and len(sample.isr) != len(before.isr):
            change = -1 if len(sample.isr) < len(before.isr) else 1
            sample = replace(sample, change=change)
        previous[sample.key] = sample
        samples.append(sample)
    return samples


def watch_end(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The last `partition.watch_end` event (None: the watch never ended in this history)."""
    ends = [e for e in events if e.get("kind") == ev.PARTITION_WATCH_END]
    return max(ends, key=lambda e: e["ts"]) if ends else None


def under_replicated_ms(samples: list[PartitionSample], end_ms: int | None = None) -> int:
    """Milliseconds during which some partition had fewer replicas in sync than assigned:
    between consecutive samples (of any partition), while the latest sample of some
    partition was under-replicated; after the last sample up to `end_ms` (the watch's end)
    when it is later."""
    under: dict[tuple[str, int], bool] = {}
    total = 0
    for before, after in pairwise(samples):
        under[before.key] = before.under_replicated
        if any(under.values()):
            total += after.ts - before.ts
    if samples:
        last = samples[-1]
        under[last.key] = last.under_replicated
        if end_ms is not None and end_ms > last.ts and any(under.values()):
            total += end_ms - last.ts
    return total


def isr_figures(events: list[dict[str, Any]]) -> IsrFigures:
    """The summary's `isr` section. Without a `partition.state` event every figure is null
    (undecided: the history predates the watch, or no poll was ever answered)."""
    samples = partition_samples(events)
    end = watch_end(events)
    failed = _int(end.get("failed")) if end is not None else None
    if not samples:
        return {
            "isr_shrinks": None,
            "isr_expands": None,
            "min_isr_size": None,
            "under_replicated_s": None,
            "failed_polls": failed,
        }
    end_ms = int(end["ts"]) if end is not None else None
    return {
        "isr_shrinks": sum(1 for s in samples if s.change < 0),
        "isr_expands": sum(1 for s in samples if s.change > 0),
        "min_isr_size": min(len(s.isr) for s in samples),
        "under_replicated_s": round(under_replicated_ms(samples, end_ms) / 1000, 3),
        "failed_polls": failed,
    }
