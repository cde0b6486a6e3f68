"""Damaged segment (Jepsen's file nemesis): the broker dies, and while it is down the newest
non-empty segment of one of its partitions loses its tail (`mode: truncate`) or gets bytes
flipped near its end (`mode: bitflip`); at heal it starts again. Kafka, finding no clean
shutdown, recovers the segment: a batch whose CRC fails ends the log there, and the broker
truncates it and fetches the rest from the leader if another replica holds it. Acknowledged
records are lost only when none does.

Works on any cluster: the segment is read and written through Docker's archive API while the
container is stopped (on plfs, its backing folder). The damage is seeded by the fault's own
fields, so a spec damages the same bytes of the same file every time. History: the inject
carries `partition`, `mode`, `bytes`; `fault.discarded` the damage (`file`, `size_before`,
`size_after`, `offsets` flipped); the heal `came_back` and Kafka's `recovery` lines.
"""

from __future__ import annotations

import random
import re
from typing import Any, ClassVar, Literal

from pydantic import Field

from harness.errors import FaultError
from harness.faults.base import NodeFault
from harness.faults.control import ChaosTarget, NodeControl, NodeRef
from harness.faults.drawing import Drawing, pick, whole
from harness.faults.kind import CellView, FaultKind, Problem, required
from harness.faults.power_loss import recovery_counts
from harness.results.events import FAULT_DISCARDED

Mode = Literal["bitflip", "truncate"]
MAX_BYTES = 1 << 20
NAMED = re.compile(r"of:([A-Za-z0-9._-]+)/(\d+)$")  # leader-of:chaos/0 names a partition
DEFAULT_TAIL = 4096  # bitflip: the bytes flipped are among the segment's last this many


def newest_segment(files: dict[str, bytes]) -> str | None:
    """The `.log` with the highest base offset that holds any byte (a just-rolled active
    segment is empty: there is nothing in it to damage)."""
    logs = sorted(n for n, data in files.items() if n.endswith(".log") and data)
    return logs[-1] if logs else None


def damage(data: bytes, mode: Mode, count: int, rng: random.Random) -> tuple[bytes, list[int]]:
    """The damaged bytes and the offsets changed (bitflip: each byte gets one bit flipped,
    among the last DEFAULT_TAIL; truncate: `count` bytes off the end, no offsets)."""
    if mode == "truncate":
        return data[: max(0, len(data) - count)], []
    tail = min(DEFAULT_TAIL, len(data))
    offsets = sorted(rng.sample(range(len(data) - tail, len(data)), min(count, tail)))
    out = bytearray(data)
    for offset in offsets:
        out[offset] ^= 1 << rng.randrange(8)
    return bytes(out), offsets


class CorruptFault(NodeFault):
    kind = "corrupt"
    captures_on_heal = True

    def __init__(
        self,
        cluster: NodeControl,
        target: NodeRef,
        topic: str,
        partition: int,
        mode: Mode,
        count: int,
        seed: str,
    ) -> None:
        super().__init__(cluster, target)
        if not self.node.is_broker:
            raise FaultError(f"corrupt: {self.node.name} is not a broker (it holds no segment)")
        self.topic, self.partition, self.mode, self.count = topic, partition, mode, count
        self.rng = random.Random(seed)
        self.damaged: dict[str, Any] = {}
        self.healed: dict[str, Any] = {}
        self._log_len = 0

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "partition": f"{self.topic}/{self.partition}",
            "mode": self.mode,
            "bytes": self.count,
            **self.healed,
        }

    def _inject(self) -> None:
        self.node.kill()
        self._log_len = len(self.node.logs())
        files = self.node.partition_files(self.topic, self.partition)
        name = newest_segment(files)
        if name is None:
            raise FaultError(
                f"corrupt: {self.node.name} has no segment of {self.topic}/{self.partition} "
                "with data (not a replica of it, or nothing written yet)"
            )
        before = files[name]
        after, offsets = damage(before, self.mode, self.count, self.rng)
        self.node.replace_partition_file(self.topic, self.partition, name, after)
        self.damaged = {
            "file": f"{self.topic}-{self.partition}/{name}",
            "size_before": len(before),
            "size_after": len(after),
            "offsets": offsets,
        }
        self.cluster.history.append(
            FAULT_DISCARDED,
            fault_id=self.id,
            fault=self.kind,
            discarded={self.node.name: self.damaged},
        )

    def _heal(self) -> None:
        self._bring_back()
        self.healed = {
            "came_back": self.node.is_up(),
            "recovery": recovery_counts(self.node.logs()[self._log_len :]),
        }


class Corrupt(FaultKind):
    """`{kind: corrupt, target: leader-of:chaos/0, partition: chaos/0, mode: bitflip, bytes: 8,
    duration_s: 10}`: the broker down, its newest segment of the partition damaged; back at heal."""

    name: ClassVar[str] = "corrupt"
    changes_cluster: ClassVar[bool] = True  # a damaged segment stays on disk
    # Only a partition's leader: its target names the partition (leader-of:<topic>/<p>), and
    # the broker surely holds a segment of it (a broker:<id> may be no replica of it).
    drawing: ClassVar[Drawing | None] = Drawing(roles=("leader",))
    broker_only: ClassVar[bool] = True

    partition: str | None = Field(default=None, pattern=r"^[A-Za-z0-9._-]+/\d+$")  # topic/p
    mode: Mode | None = None  # default bitflip
    bytes: int | None = Field(default=None, ge=1, le=MAX_BYTES)  # default 1

    @classmethod
    def drawn_options(cls, rng: random.Random | None, cell: CellView) -> dict[str, Any]:
        """mode: bitflip (bytes 1-16, among the segment's last 4 KiB) or truncate (bytes
        1-8192 off its end); the partition is the one the leader-of target names."""
        mode = pick(rng, ("bitflip", "truncate"))
        high = 16 if mode == "bitflip" else 8192
        return {"mode": mode, "bytes": whole(rng, 1, high)}

    def rules(self, cell: CellView) -> list[Problem]:
        out: list[Problem] = []
        if self.duration_s is None:
            out.append(("duration_s", "corrupt needs a duration_s (then the broker starts again)"))
        named = self._partition()
        if named is None:
            out.append(
                (
                    "partition",
                    "corrupt needs the partition whose segment it damages: partition: "
                    "<topic>/<p>, or a target that names one (leader-of:<topic>/<p>)",
                )
            )
            return out
        topic, p = named
        if topic == cell.topic and p >= cell.grown_partitions:
            out.append(
                ("partition", f"expected a partition of {topic} below {cell.grown_partitions}")
            )
        return out

    def _partition(self) -> tuple[str, int] | None:
        """`partition`, else the one the target names (leader-of:<topic>/<p>), else none."""
        if self.partition is not None:
            topic, p = self.partition.rsplit("/", 1)
            return topic, int(p)
        m = NAMED.search(self.target)
        return (m[1], int(m[2])) if m else None

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> CorruptFault:
        named = self._partition()
        if named is None:
            raise FaultError("corrupt: no partition named (partition: <topic>/<p>)")
        topic, p = named
        seed = f"{self.at_s}:{self.target}:{topic}/{p}:{self.mode}:{self.bytes}"
        return CorruptFault(
            cluster, required(target), topic, p, self.mode or "bitflip", self.bytes or 1, seed
        )
