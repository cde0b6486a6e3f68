"""reassign: move one partition onto given brokers, or change a whole topic's replication factor.

`{kind: reassign, target: "chaos/0", to: [3, 1, 2]}` moves one partition (first broker:
preferred leader); `{kind: reassign, target: "__consumer_offsets", replication_factor: 3}`
gives every partition of the topic three replicas (plan_replication_factor). What the
spec could not know (the topic exists, the brokers run) is checked when the fault fires.
The heal records topic, moved, before/after replicas of the moved partitions, completed
and elapsed_s.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from pydantic import Field

from harness.errors import FaultError
from harness.faults.control import ChaosTarget, NodeRef, Operable
from harness.faults.drawing import Drawing, whole
from harness.faults.kind import (
    CellView,
    FaultKind,
    NodeId,
    OperationTimeout,
    Problem,
    TargetStyle,
)
from harness.faults.operation import Operation
from harness.faults.reassignment import Moves, plan_replication_factor, reassign_and_wait
from harness.faults.target_rules import TOPIC_TARGET
from harness.nodes.topology import MAX_BROKERS


class Reassign(FaultKind):
    """`{kind: reassign, target: chaos/0, to: [3, 1, 2]}` or `{..., target: <topic>,
    replication_factor: 3}`."""

    name: ClassVar[str] = "reassign"
    # One partition of the spec's topic moved (drawn_target), onto drawn brokers.
    drawing: ClassVar[Drawing | None] = Drawing(roles=("cluster",))
    target_style: ClassVar[TargetStyle] = "topic"
    operation: ClassVar[bool] = True

    to: list[NodeId] | None = Field(default=None, min_length=1)  # replicas, leader first
    replication_factor: int | None = Field(default=None, ge=1, le=MAX_BROKERS)  # a topic's new
    timeout_s: OperationTimeout = None

    @classmethod
    def drawn_target(cls, rng: random.Random | None, cell: CellView) -> str:
        """A partition of the spec's topic, each as likely: <topic>/<p>."""
        return f"{cell.topic}/{whole(rng, 0, cell.partitions - 1)}"

    @classmethod
    def drawn_options(cls, rng: random.Random | None, cell: CellView) -> dict[str, Any]:
        """to: topic.replication_factor distinct brokers of the cell's running ones, in a
        random order (the first leads), so the replicas move, or only the preferred leader
        does (what the partition has now is not known when drawing: a draw equal to it is
        a reassignment Kafka has nothing to do for). Spares are left out: the operation
        refuses a broker not running (a spare not yet added)."""
        brokers = sorted(cell.brokers)
        rf = min(cell.replication_factor, len(brokers))
        to = brokers[:rf] if rng is None else rng.sample(brokers, rf)
        return {"to": to}

    def rules(self, cell: CellView) -> list[Problem]:
        out: list[Problem] = []
        if (self.to is None) == (self.replication_factor is None):
            return [
                ("to", "reassign takes either to (one partition's replicas) or replication_factor")
            ]
        m = TOPIC_TARGET.fullmatch(self.target)
        partition = m is not None and m["partition"] is not None
        reachable = cell.reachable
        if self.to is not None:
            if not partition:
                out.append(
                    (
                        "target",
                        "to moves one partition: expected <topic>/<partition> "
                        f"(got {self.target!r})",
                    )
                )
            if len(set(self.to)) != len(self.to):
                out.append(("to", f"a broker is listed twice (got {self.to})"))
            unknown = [b for b in self.to if b not in reachable]
            if unknown:
                out.append(("to", f"no broker {unknown}; brokers (spares included): {reachable}"))
        if self.replication_factor is not None:
            if partition:
                out.append(
                    (
                        "target",
                        "replication_factor applies to a whole topic: expected <topic> "
                        f"(got {self.target!r})",
                    )
                )
            if self.replication_factor > len(reachable):
                out.append(
                    (
                        "replication_factor",
                        f"expected <= the brokers (spares included: {len(reachable)}) "
                        f"(got {self.replication_factor})",
                    )
                )
        return out

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> ReassignFault:
        return ReassignFault(cluster, target, self)


def parse_topic_target(target: NodeRef | None) -> tuple[str, int | None]:
    """`<topic>` or `<topic>/<partition>` -> (topic, partition or None)."""
    m = TOPIC_TARGET.fullmatch(str(target)) if target is not None else None
    if m is None:
        raise FaultError(f"expected a target <topic> or <topic>/<partition> (got {target!r})")
    return m["topic"], None if m["partition"] is None else int(m["partition"])


def require_topic(cluster: Operable, topic: str) -> None:
    topics = cluster.topic_names()
    if topic not in topics:
        raise FaultError(f"no topic {topic!r} in the cluster (topics: {', '.join(topics)})")


class ReassignFault(Operation):
    kind = "reassign"

    def __init__(self, cluster: ChaosTarget, target: NodeRef | None, spec: Reassign) -> None:
        super().__init__(cluster, spec.given(), spec.timeout_s)
        self.spec = spec
        self.view = cluster  # also ClusterView: which brokers run
        self.target = target

    def target_name(self) -> str:
        return str(self.target)

    def _inject(self) -> None:
        topic, partition = parse_topic_target(self.target)
        to, rf = self.spec.to, self.spec.replication_factor
        if (to is None) == (rf is None):
            raise FaultError(
                "reassign takes either to (one partition's replicas) or replication_factor"
            )
        require_topic(self.ops, topic)
        states = self.ops.partition_states(topic)
        running = sorted(self.view.brokers)
        if to is not None:
            moves = self._one_partition(topic, partition, len(states), running, to)
        else:
            assert rf is not None
            if partition is not None:
                raise FaultError(
                    f"replication_factor applies to a whole topic: target {topic!r}, "
                    f"not {self.target!r}"
                )
            moves = plan_replication_factor(states, running, rf)
        self.outcome["topic"] = topic
        self.outcome.update(reassign_and_wait(self.ops, topic, moves, self.timeout_s))

    def _one_partition(
        self, topic: str, partition: int | None, count: int, running: list[int], to: list[int]
    ) -> Moves:
        if partition is None:
            raise FaultError(
                f"to moves one partition: target <topic>/<partition> (got {self.target!r})"
            )
        if partition >= count:
            raise FaultError(f"topic {topic!r} has no partition {partition} (it has {count})")
        absent = [b for b in to if b not in running]
        if absent:
            raise FaultError(
                f"to names broker(s) {absent} that are not running in the cluster "
                f"(running: {running}; a spare broker must be added first)"
            )
        if not to or len(set(to)) != len(to):
            raise FaultError(f"to must list distinct brokers (got {list(to)})")
        return {partition: tuple(to)}
