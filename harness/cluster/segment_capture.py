"""Broker forensics, first half: copy a broker's partition directories aside at the moments
its log may lose records for good.

A deposed leader truncates its log to the new leader's when it rejoins; a wiped disk loses
everything. So a copy is taken before a broker rejoins after a fault (the fault's heal asks,
through `NodeControl.capture_segments`), before kill's `wipe` empties its disk, and of every
broker at collect (the final logs). Each copy is one `segments.captured` event, failures too
(a record that could have been in a failed copy cannot be placed later). The copies are
decoded at collect (harness.runner.segment_tables); the placement is a check
(spark_jobs/checks/forensics.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from harness.nodes.node import ClusterNode
from harness.results import events as ev
from harness.results.history import History

HEAL = "heal"  # before a broker rejoins after a fault
WIPE = "wipe"  # before its log directories are emptied
COLLECT = "collect"  # every broker, at the end
REASONS = (HEAL, WIPE, COLLECT)


@dataclass(frozen=True)
class Capture:
    label: str  # `<n>-<reason>-<node>`: its folder, and `capture` in segments.parquet
    node: str
    reason: str
    ts: int  # ms since the epoch, when the copy started
    complete: bool


class SegmentCapture:
    """Copies into `root`/<label>; `topics()` gives topic -> partitions it has at least."""

    def __init__(self, root: Path, topics: Callable[[], Mapping[str, int]], history: History):
        self.root = root
        self.topics = topics
        self.history = history
        self.captures: list[Capture] = []
        self._lock = threading.Lock()

    def capture(
        self,
        node: ClusterNode,
        reason: str,
        fault: Mapping[str, object] | None = None,
        suffix: str = "",
    ) -> Capture:
        """Copy the node's partitions now; recorded either way, never raises."""
        label, ts = self._reserve(node, reason)
        return self._copy(node, reason, label, ts, fault, suffix)

    def _reserve(self, node: ClusterNode, reason: str) -> tuple[str, int]:
        """The copy's label and time, booked first: a later copy of another broker gets the
        next number."""
        with self._lock:
            label = f"{len(self.captures) + 1:02d}-{reason}-{node.name}"
            ts = int(time.time() * 1000)
            self.captures.append(Capture(label, node.name, reason, ts, False))
        return label, ts

    def _copy(
        self,
        node: ClusterNode,
        reason: str,
        label: str,
        ts: int,
        fault: Mapping[str, object] | None = None,
        suffix: str = "",
    ) -> Capture:
        t0 = time.monotonic()
        fields: dict[str, object] = {"node": node.name, "label": label, "reason": reason}
        try:
            # running: the broker may still append after this copy (a network fault's heal)
            fields["state"] = node.status()
        except Exception:
            fields["state"] = None
        if fault:
            fields.update(fault)
        try:
            partitions, size = node.copy_partitions(dict(self.topics()), self.root / label, suffix)
        except Exception as exc:  # any failure: recorded, the placement says unknown
            error = f"{type(exc).__name__}: {exc}".splitlines()[0]
            self.history.append(ev.SEGMENTS_CAPTURED, **fields, complete=False, error=error)
            return self._book(label, node.name, reason, ts, False)
        took = round((time.monotonic() - t0) * 1000)
        self.history.append(
            ev.SEGMENTS_CAPTURED,
            **fields,
            complete=True,
            partitions=partitions,
            bytes=size,
            took_ms=took,
        )
        return self._book(label, node.name, reason, ts, True)

    def _book(self, label: str, node: str, reason: str, ts: int, complete: bool) -> Capture:
        done = Capture(label, node, reason, ts, complete)
        with self._lock:
            self.captures = [done if c.label == label else c for c in self.captures]
        return done

    def capture_all(self, nodes: list[ClusterNode]) -> None:
        """Every broker's final copy (collect), labelled in the nodes' order and copied at
        once: each copy waits on its own container's archive stream, not on the CPU."""
        booked = [(node, *self._reserve(node, COLLECT)) for node in nodes]
        with ThreadPoolExecutor(max_workers=max(1, len(booked))) as pool:
            for _ in pool.map(lambda b: self._copy(b[0], COLLECT, b[1], b[2]), booked):
                pass
