"""Split the cluster in two sides that cannot exchange packets (clients still reach every broker).

Either the spec names the sides (`sides: [[1], [2, 3]]`; nodes not named are untouched), or
it names a broker and which side it is on (`side: minority|majority`): the minority holds
(brokers - 1) // 2 brokers (at least one), the target first, then the others in id order.
Combined KRaft nodes are their brokers; dedicated controllers and ZooKeeper, which hold no
partition, go on `zookeeper_side` (majority by default, where a quorum normally survives).
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from harness.errors import ConfigError
from harness.faults import target_rules
from harness.faults.control import ChaosTarget, Node, NodeControl, NodeRef
from harness.faults.drawing import Drawing
from harness.faults.kind import MAX_NODE_ID, CellView, FaultKind, Problem, TargetStyle
from harness.faults.partition import PartitionFault

Side = Literal["minority", "majority"]


class Split(FaultKind):
    """`{kind: split, sides: [[1], [2, 3]]}` or `{kind: split, target: ..., side: minority}`."""

    name: ClassVar[str] = "split"
    drawing: ClassVar[Drawing | None] = Drawing()
    target_style: ClassVar[TargetStyle] = "split"
    broker_only: ClassVar[bool] = True

    sides: list[list[Annotated[int, Field(le=MAX_NODE_ID)] | str]] | None = None  # ids / names
    side: Side | None = None  # which side the target is on
    zookeeper_side: Side | None = None  # where ZooKeeper and dedicated controllers go

    def rules(self, cell: CellView) -> list[Problem]:
        if self.sides is None:
            if len(cell.brokers) < 2:
                return [("kind", "split needs at least two brokers")]
            return []
        if self.side is not None:
            return [("side", "give either sides or side (with a target), not both")]
        known: list[int | str] = [*cell.brokers, *cell.controllers]
        if cell.mode == "zookeeper":
            known.append("zookeeper")
        out: list[Problem] = []
        flat = [n for side in self.sides for n in side]
        if len(self.sides) < 2 or any(not side for side in self.sides):
            out.append(("sides", f"expected at least two non-empty sides (got {self.sides})"))
        if len(set(map(str, flat))) != len(flat):
            out.append(("sides", f"a node is on more than one side (got {self.sides})"))
        unknown = [n for n in flat if n not in known]
        if unknown:
            out.append(("sides", f"no node {unknown}; nodes: {known}"))
        return out

    def target_problem(self, cell: CellView) -> str | None:
        if self.sides is not None:
            if self.target != "random":
                return "give either sides or a target (with side), not both"
            return None
        return target_rules.node_target(self, cell)

    def planned_style(self) -> TargetStyle:
        return "none" if self.sides is not None else "node"

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> PartitionFault:
        return split(cluster, target, self)


def split(cluster: NodeControl, target: NodeRef | None, spec: Split) -> PartitionFault:
    """The split fault (not yet injected): shape "split", both sides in its history."""
    if spec.sides is not None:
        if target is not None:
            raise ConfigError("split: give either sides or a target (with side), not both")
        return PartitionFault(cluster, spec.sides, "split")
    if target is None:
        raise ConfigError("split needs sides, or a target broker (with side)")
    sides = plan_sides(cluster, target, spec.side or "minority", spec.zookeeper_side or "majority")
    return PartitionFault(cluster, sides, "split")


def plan_sides(
    cluster: NodeControl, target: NodeRef, side: Side, zookeeper_side: Side
) -> list[list[str]]:
    """[the target's side, the other side] as node names."""
    node = cluster.node(target)
    if not node.is_broker:
        raise ConfigError(f"split: the target must be a broker, not {node.name}")
    brokers = sorted(cluster.broker_nodes, key=_id)
    if len(brokers) < 2:
        raise ConfigError("split needs at least two brokers")
    minority = max(1, (len(brokers) - 1) // 2)
    size = minority if side == "minority" else len(brokers) - minority
    mine = [node, *[b for b in brokers if b is not node][: size - 1]]
    other = [b for b in brokers if b not in mine]
    rest = [n for n in cluster.nodes if not n.is_broker]  # ZooKeeper, dedicated controllers
    (mine if zookeeper_side == side else other).extend(rest)
    return [[n.name for n in mine], [n.name for n in other]]


def _id(node: Node) -> int:
    return node.node_id if node.node_id is not None else -1
