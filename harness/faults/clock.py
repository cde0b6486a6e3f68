"""clock-skew: a process's wall clock jumps by `offset_s` for `duration_s`; time keeps running.

The skewed processes run under libfaketime (Debian's `faketime`), preloaded only into the
processes a spec plans a skew for (the FakeClock capability it needs): a broker's or
controller's JVM through a mounted wrapper entry point (docker/clock-entrypoint.sh), the
producer's and consumer members' processes through their environment
(harness.common.faketime). Each reads its
offset from a file (`+0` at start, `+3600` during a skew) at most once a second
(FAKETIME_CACHE_DURATION=1); the fault writes that file and heal writes `+0` back. Only the
wall clock moves (System.currentTimeMillis, time(), gettimeofday); the monotonic clock
(System.nanoTime, timeouts, session expiry) does not (FAKETIME_DONT_FAKE_MONOTONIC=1).

A node's offset file lives in its container: a node killed and started again during the
skew comes back skewed. A client's file is in the cell folder (clocks/<process>.offset):
a member restarted during the skew comes back skewed too.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from harness.common.faketime import offset_text, write_offset
from harness.errors import ConfigError, FaultError
from harness.faults import target_rules
from harness.faults.base import Fault, NodeFault
from harness.faults.consumer import CONSUMER_TARGET, consumer_target_problem
from harness.faults.control import ChaosTarget, Node, NodeControl, NodeRef
from harness.faults.drawing import NODE_ROLES, Drawing, pick
from harness.faults.kind import CellView, FaultKind, Needs, Problem, required
from harness.faults.producer import PRODUCER_TARGET
from harness.faults.stage import Stage
from harness.nodes.capabilities import FakeClock

MAX_OFFSET_S = 10 * 365 * 86_400  # ten years either way
NODE_OFFSET_FILE = "/var/lib/kafka-chaos-clock/offset"  # inside a node (clock-entrypoint.sh)
SPARK_SETS = re.compile(r"consumer:spark\d*/")
# A drawn skew's size (either way): past the clients' timeouts, up to a day, never past
# retention.ms (7 days by default), where a skew deletes segments by time.
DRAWN_OFFSETS_S = (5, 30, 300, 3600, 86_400)


def level_of(offset_s: float) -> str:
    """The timeline's words for the skew: `+3600 s`."""
    return f"{offset_text(offset_s)} s"


def is_process_target(target: str) -> bool:
    """The producer or a consumer member, rather than a node."""
    return target == PRODUCER_TARGET or CONSUMER_TARGET.fullmatch(target) is not None


class NodeClockSkewFault(NodeFault):
    """The node's JVM sees its wall clock `offset_s` off. History: offset_s, level."""

    kind = "clock-skew"
    needs = (FakeClock,)

    def __init__(self, cluster: NodeControl, target: NodeRef, offset_s: float) -> None:
        super().__init__(cluster, target)
        if self.node.node_id is None:
            raise ConfigError(f"clock-skew acts on a Kafka node, not {self.node.name}")
        self.offset_s = offset_s

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "offset_s": self.offset_s, "level": level_of(self.offset_s)}

    def _write(self, offset_s: float) -> None:
        text = offset_text(offset_s)
        script = f"printf '%s\\n' '{text}' > {NODE_OFFSET_FILE}.tmp && mv {NODE_OFFSET_FILE}.tmp {NODE_OFFSET_FILE}"
        code, out = self.node.exec("sh", "-c", script)
        if code != 0:
            raise FaultError(f"clock-skew: {self.node.name}: writing the offset failed: {out}")

    def _inject(self) -> None:
        self._write(self.offset_s)

    def _heal(self) -> None:
        self._write(0)


class ProcessClockSkewFault(Fault):
    """A client process (the producer, a consumer member) sees its wall clock `offset_s` off.

    History: target (producer, consumer:<set>/<i>), offset_s, level, file."""

    kind = "clock-skew"

    def __init__(self, cluster: NodeControl, target: str, path: Path, offset_s: float) -> None:
        super().__init__(cluster)
        self.target = target
        self.path = path
        self.offset_s = offset_s

    def describe(self) -> dict[str, Any]:
        return {
            "fault": self.kind,
            "target": self.target,
            "offset_s": self.offset_s,
            "level": level_of(self.offset_s),
            "file": self.path.name,
        }

    def affected_nodes(self) -> list[Node]:
        return []

    def _inject(self) -> None:
        write_offset(self.path, self.offset_s)

    def _heal(self) -> None:
        write_offset(self.path, 0)


class ClockSkew(FaultKind):
    """`{kind: clock-skew, target: leader-of:chaos/0, offset_s: 3600, duration_s: 30}`."""

    name: ClassVar[str] = "clock-skew"
    # A node (a broker, a few, the leader, the controller) or a client process.
    drawing: ClassVar[Drawing | None] = Drawing(roles=(*NODE_ROLES, "client"))
    needs: ClassVar[Needs] = (FakeClock,)  # the skewed node's or process's

    offset_s: float | None = Field(
        default=None, ge=-MAX_OFFSET_S, le=MAX_OFFSET_S, allow_inf_nan=False
    )  # seconds added to the wall clock (negative: behind; 0: a control cell)

    @classmethod
    def drawn_options(cls, rng: random.Random | None, cell: CellView) -> dict[str, Any]:
        """offset_s: 5, 30, 300, 3600 or 86400 s, ahead or behind (+5 s for a probe)."""
        return {"offset_s": pick(rng, (1, -1)) * pick(rng, DRAWN_OFFSETS_S)}

    @classmethod
    def drawn_target(cls, rng: random.Random | None, cell: CellView) -> str:
        """`client`: the producer (not a Java one: it keeps its schedule by the wall clock) or
        a member of any consumer set but a Spark one, each process as likely."""
        processes = [] if cell.producer_client == "java" else [PRODUCER_TARGET]
        processes += [
            f"consumer:{name}/{i}"
            for name, members in cell.member_counts.items()
            for i in range(members)
            if not SPARK_SETS.match(f"consumer:{name}/")
        ]
        return pick(rng, processes) if processes else PRODUCER_TARGET

    def rules(self, cell: CellView) -> list[Problem]:
        out: list[Problem] = []
        if self.offset_s is None:
            out.append(("offset_s", "clock-skew needs offset_s: the seconds the clock jumps by"))
        if self.duration_s is None:
            out.append(
                (
                    "duration_s",
                    "clock-skew needs duration_s: how long the clock stays off (then it is "
                    "set right again)",
                )
            )
        return out

    def target_problem(self, cell: CellView) -> str | None:
        text = self.target
        if text == PRODUCER_TARGET:
            if cell.producer_client == "java":
                return (
                    f"{self.kind} on the producer needs client librdkafka: the Java producer "
                    "keeps its schedule by its own wall clock"
                )
            return None
        if text.startswith("consumer:"):
            if SPARK_SETS.match(text):
                return "clock-skew acts on the producer, group or pipeline members; not on Spark"
            return consumer_target_problem(cell, text)
        if text.strip() == "zookeeper" or text.startswith("zookeeper "):
            return "clock-skew acts on a Kafka node or a client; ZooKeeper cannot be its target"
        return target_rules.node_target(self, cell)

    def process_target(self) -> str | None:
        """The producer or a consumer member it skews (None: a cluster node)."""
        return self.target if is_process_target(self.target) else None

    def resolves_node(self, target: str) -> bool:
        return not is_process_target(target)

    def unplayable(self, stage: Stage, target: str) -> str | None:
        if is_process_target(target) and stage.clocks is None:
            return "no client process of this cell runs with a fake clock"
        return None

    def act(self, stage: Stage, target: NodeRef, index: int) -> Fault:
        """On a node, the cluster's fault; on a client process, its offset file's."""
        if isinstance(target, str) and is_process_target(target) and stage.clocks is not None:
            assert self.offset_s is not None  # rules()
            path = stage.clocks.clock_file(target)
            return ProcessClockSkewFault(stage.cluster, target, path, self.offset_s)
        return self.make(stage.cluster, target or None)

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> Fault:
        assert self.offset_s is not None  # rules()
        return NodeClockSkewFault(cluster, required(target), self.offset_s)
