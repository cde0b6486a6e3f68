"""A broker's log directory runs out of space (Redpanda's FullDiskTest, kafkatest's
log_dir_failure_test): real ENOSPC on the broker's own filesystem, then an operator's repair.

The directory is filled to the last byte (harness.nodes.disks: each sized log directory is
its own tmpfs, so the machine's disk is never touched). What Kafka then does is its own
business and is what we record: a write that fails marks the directory offline (its
partitions' leadership moves to other replicas); when every log directory of a broker has
failed, or the one holding KRaft's metadata log, the broker halts. The heal frees the space
and repairs as an operator would: a broker that halted is started, a broker with an offline
directory is restarted (Kafka brings a failed directory back only at start-up).

History: inject records `log_dirs` (the paths it fills); heal adds `filled_mb` and what
Kafka did: `offline_dirs`, `broker_stopped`, `shutdown` (Kafka's last word on it, if any),
`storage_errors` (log lines about failed writes), `led_at_inject` / `leaders_moved`
(partitions the broker led when its disk filled, and how many had another leader by the
heal), `freed_mb` and `restarted`. A broker already down when its disk filled (another
fault's doing) is left to that fault: the heal only frees the space (`down_at_inject`).
"""

from __future__ import annotations

import contextlib
import random
import re
from typing import Any, ClassVar

from pydantic import Field

from harness.faults.base import NodeFault
from harness.faults.control import ChaosTarget, NodeRef
from harness.faults.drawing import Drawing, pick
from harness.faults.kind import CellView, FaultKind, Needs, Problem, required
from harness.nodes.capabilities import LogDirs
from harness.nodes.topology import MAX_LOG_DIRS

MB = 1024 * 1024
OFFLINE = re.compile(r"Stopping serving (?:logs|replicas) in dir (\S+)")
SHUTDOWN = re.compile(r"Shutdown broker because [^\n(]*")
STORAGE_ERROR = re.compile(r"No space left on device|KafkaStorageException")


def what_kafka_did(log: str) -> dict[str, Any]:
    """Read from the broker's log written since the disk filled (pure: unit-tested)."""
    offline = sorted({m[1] for m in OFFLINE.finditer(log)})
    shutdown = SHUTDOWN.findall(log)
    return {
        "offline_dirs": offline,
        "shutdown": shutdown[-1].strip() if shutdown else None,
        "storage_errors": sum(1 for line in log.splitlines() if STORAGE_ERROR.search(line)),
    }


class DiskFullFault(NodeFault):
    kind = "disk-full"
    captures_on_heal = True

    def __init__(self, cluster: ChaosTarget, target: NodeRef, log_dir: int | None = None) -> None:
        super().__init__(cluster, target)
        self.view = cluster
        dirs = self.node.log_dirs
        self.indexes = list(range(len(dirs))) if log_dir is None else [log_dir]
        self.filled = 0
        self.observed: dict[str, Any] = {}
        self._log_mark = 0
        self._led: set[tuple[str, int]] | None = None
        self._was_up = True

    def describe(self) -> dict[str, Any]:
        paths = [self.node.log_dirs[i] for i in self.indexes]
        which = "every log dir" if len(self.indexes) > 1 else f"log dir {self.indexes[0]}"
        out = {**super().describe(), "log_dirs": paths, "level": f"{which} full"}
        if self.filled:
            out["filled_mb"] = round(self.filled / MB, 1)
        return {**out, **self.observed}

    def _led_now(self) -> set[tuple[str, int]] | None:
        """(topic, partition) this broker leads; None if the cluster could not say."""
        me = self.node.node_id
        try:
            return {
                (topic, p)
                for topic in self.view.topic_names()
                for p, state in self.view.partition_states(topic).items()
                if state.leader == me
            }
        except Exception:
            return None

    def _inject(self) -> None:
        self._was_up = self.node.is_up()
        self._log_mark = len(self.node.logs())
        self._led = self._led_now()
        self.observed = {}
        for i in self.indexes:
            self.filled += self.node.fill_log_dir(i)

    def _heal(self) -> None:
        freed = sum(self.node.free_log_dir(i) for i in self.indexes)
        if not self._was_up:
            # Down when its disk filled (another fault's doing): that fault brings it back.
            self.observed = {"down_at_inject": True, "freed_mb": round(freed / MB, 1)}
            return
        stopped = not self.node.is_up()
        seen = what_kafka_did(self.node.logs()[self._log_mark :])
        led_now = None if stopped else self._led_now()
        moved: int | None = None
        if self._led is not None and (stopped or led_now is not None):
            moved = len(self._led) if stopped else len(self._led - (led_now or set()))
        self.observed = {
            **seen,
            "broker_stopped": stopped,
            "led_at_inject": None if self._led is None else len(self._led),
            "leaders_moved": moved,
            "freed_mb": round(freed / MB, 1),
            "restarted": stopped or bool(seen["offline_dirs"]),
        }
        if not stopped and seen["offline_dirs"]:
            # Kafka brings an offline log directory back only when it starts.
            with contextlib.suppress(Exception):
                self.node.stop()
        self._bring_back()


class DiskFull(FaultKind):
    """`{kind: disk-full, target: leader-of:chaos/0, log_dir: 0, duration_s: 20}`."""

    name: ClassVar[str] = "disk-full"
    changes_cluster: ClassVar[bool] = True  # its log directories were filled (and sized)
    drawing: ClassVar[Drawing | None] = Drawing()
    broker_only: ClassVar[bool] = True
    needs: ClassVar[Needs] = (LogDirs,)  # sized: never the machine's disk

    log_dir: int | None = Field(default=None, ge=0, le=MAX_LOG_DIRS - 1)  # default: all of them

    @classmethod
    def drawn_options(cls, rng: random.Random | None, cell: CellView) -> dict[str, Any]:
        """log_dir: unset (every log directory) or, with cluster.log_dirs > 1, one index of
        0..log_dirs-1, each as likely."""
        choices: list[int | None] = [None, *range(cell.log_dirs)] if cell.log_dirs > 1 else [None]
        log_dir = pick(rng, choices)
        return {} if log_dir is None else {"log_dir": log_dir}

    def rules(self, cell: CellView) -> list[Problem]:
        if self.log_dir is not None and self.log_dir >= cell.log_dirs:
            return [
                (
                    "log_dir",
                    f"expected an index below cluster.log_dirs ({cell.log_dirs}), 0.."
                    f"{cell.log_dirs - 1} (got {self.log_dir})",
                )
            ]
        return []

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> DiskFullFault:
        return DiskFullFault(cluster, required(target), self.log_dir)
