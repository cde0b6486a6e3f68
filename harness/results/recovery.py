"""When the cluster had recovered after each fault's heal, read from a history: the
`recovering` periods the ack latency keeps apart from its steady baseline.

A fault's heal is not the end of its cost: the broker rejoins, followers catch up, leaders
move, and records sent then wait as they did during the fault. A recovering period runs
from a heal (harness.results.windows, consumer crashes excluded: not on the producer's
path) to the first moment at or after it at which every partition the partition watch
(`partition.state`, harness.results.isr) knows has a leader and all its replicas in its ISR
— the runner's own `recovery.end` criterion. Not the preferred leader: Kafka moves
leadership back only at its next imbalance check (`leader.imbalance.check.interval.seconds`,
300 s by default), often after the cell. The watch polls about once a second, so the end
is up to about a second late. No healthy moment after the heal: the period stays open
(None). A history without any `partition.state` (written before the watch, or no poll
answered): RECOVERY_CAP_MS after the heal, documented, since nothing says when it ended.
"""

from __future__ import annotations

from typing import Any

from harness.results.isr import PartitionSample, partition_samples
from harness.results.windows import fault_windows

# The recovering period after a heal when the history has no partition.state at all:
# Kafka's replica.lag.time.max.ms default, the longest a live follower may lag and stay
# in the ISR, so a rejoined broker has caught up (or been dropped) by then.
RECOVERY_CAP_MS = 30_000

Period = tuple[int, int | None]  # [start, end) in ms; end None: never closed


def healthy(sample: PartitionSample) -> bool:
    """A leader, and every assigned replica in the ISR."""
    return sample.leader is not None and set(sample.replicas) <= set(sample.isr)


def recovered_at(samples: list[PartitionSample], heal_ms: int) -> int | None:
    """The first moment at or after `heal_ms` at which every partition's latest sample is
    healthy (samples in time order); None when it never is."""
    latest: dict[tuple[str, int], PartitionSample] = {}
    pending = iter(samples)
    sample = next(pending, None)
    while sample is not None and sample.ts <= heal_ms:
        latest[sample.key] = sample
        sample = next(pending, None)
    if latest and all(healthy(s) for s in latest.values()):
        return heal_ms
    while sample is not None:
        ts = sample.ts
        while sample is not None and sample.ts == ts:  # one poll's events share its time
            latest[sample.key] = sample
            sample = next(pending, None)
        if all(healthy(s) for s in latest.values()):
            return ts
    return None


def recovering_periods(events: list[dict[str, Any]]) -> list[Period]:
    """Per healed fault done to the cluster, in time order: [heal, recovered) (see the
    module's docstring); an empty period (already healthy at the heal) is left out."""
    samples = partition_samples(events)
    periods: list[Period] = []
    for window in fault_windows(events):
        if window.consumer_crash or window.end_ms is None:
            continue
        heal = window.end_ms
        end = recovered_at(samples, heal) if samples else heal + RECOVERY_CAP_MS
        if end is None or end > heal:
            periods.append((heal, end))
    return sorted(periods, key=lambda p: p[0])
