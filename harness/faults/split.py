"""Split the cluster in two sides that cannot exchange packets (clients still reach every broker).

Either the spec names the sides (`sides: [[1], [2, 3]]`; nodes not named are untouched), or
it names a broker and which side it is on (`side: minority|majority`): the minority holds
(brokers - 1) // 2 brokers (at least one), the target first, then the others in id order.
Combined KRaft nodes are their brokers; dedicated controllers and ZooKeeper, which hold no
partition, go on `zookeeper_side` (majority by default, where a quorum normally survives).
"""

from __future__ import annotations

from harness.errors import ConfigError
from harness.faults.control import Node, NodeControl, NodeRef
from harness.faults.options import FaultOptions, Side
from harness.faults.partition import PartitionFault


def split(cluster: NodeControl, target: NodeRef | None, options: FaultOptions) -> PartitionFault:
    """The split fault (not yet injected): shape "split", both sides in its history."""
    if options.sides is not None:
        if target is not None:
            raise ConfigError("split: give either sides or a target (with side), not both")
        return PartitionFault(cluster, options.sides, "split")
    if target is None:
        raise ConfigError("split needs sides, or a target broker (with side)")
    sides = plan_sides(
        cluster, target, options.side or "minority", options.zookeeper_side or "majority"
    )
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
