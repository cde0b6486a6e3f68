"""Network partitions between nodes, with iptables inside the containers.

Rules are installed on both sides with the addresses the nodes have at inject
time. A node restarted during a partition gets a fresh network namespace (its
own rules are gone) and possibly a new address: heal_all() clears everything.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

from harness.errors import ConfigError, FaultError
from harness.faults import iptables
from harness.faults.base import Fault
from harness.faults.control import ChaosTarget, Node, NodeControl, NodeRef
from harness.faults.drawing import Drawing
from harness.faults.kind import FaultKind, Mode, required


class PartitionFault(Fault):
    """Nodes on different sides cannot exchange packets; clients still reach every broker."""

    kind = "partition"

    def __init__(
        self,
        cluster: NodeControl,
        sides: Sequence[Iterable[NodeRef]],
        label: str = "split",
        port: int | None = None,
    ) -> None:
        """`port`: cut only the TCP traffic where one end is this port (a listener), not
        every packet between the sides."""
        super().__init__(cluster)
        self.label = label
        self.port = port
        self.sides: list[list[Node]] = [[cluster.node(r) for r in side] for side in sides]
        names = [n.name for side in self.sides for n in side]
        if len(self.sides) < 2 or any(not side for side in self.sides):
            raise ConfigError(
                f"a partition needs at least two non-empty sides, got {self._names()}"
            )
        if len(names) != len(set(names)):
            raise ConfigError(f"a node is on more than one side of the partition: {self._names()}")
        self._touched: list[Node] = []

    # --- the shapes experiments ask for -----------------------------------------------------
    @classmethod
    def isolate(cls, cluster: NodeControl, target: NodeRef) -> PartitionFault:
        """Cut one node off from every other node (brokers, controllers, ZooKeeper)."""
        node = cluster.node(target)
        return cls(
            cluster, [[node.name], [n.name for n in cluster.nodes if n is not node]], "isolate"
        )

    @classmethod
    def from_brokers(cls, cluster: NodeControl, target: NodeRef) -> PartitionFault:
        """Cut one broker off from the other brokers only (replication stops)."""
        node = cluster.node(target)
        others = [n.name for n in cluster.broker_nodes if n is not node]
        return cls(cluster, [[node.name], others], "from-brokers")

    @classmethod
    def from_controllers(cls, cluster: NodeControl, target: NodeRef) -> PartitionFault:
        """Cut one node off from the KRaft controller quorum (the other voters)."""
        node = cluster.node(target)
        voters = [n.name for n in cluster.nodes if n.is_controller and n is not node]
        if not voters:
            raise ConfigError("from_controllers needs a KRaft cluster with another controller")
        return cls(cluster, [[node.name], voters], "from-controllers")

    @classmethod
    def from_zookeeper(cls, cluster: NodeControl, target: NodeRef) -> PartitionFault:
        """Cut one broker off from ZooKeeper (its session expires after zookeeper.session.timeout.ms)."""
        if cluster.mode != "zookeeper":
            raise ConfigError("from_zookeeper needs mode='zookeeper'")
        return cls(cluster, [[cluster.node(target).name], ["zookeeper"]], "from-zookeeper")

    @classmethod
    def split(cls, cluster: NodeControl, side: Iterable[NodeRef]) -> PartitionFault:
        """Two halves: the given nodes against all the others."""
        chosen = {cluster.node(r).name for r in side}
        rest = [n.name for n in cluster.nodes if n.name not in chosen]
        return cls(cluster, [sorted(chosen), rest], "split")

    # --- Fault ------------------------------------------------------------------------------
    def _names(self) -> list[list[str]]:
        return [[n.name for n in side] for side in self.sides]

    def describe(self) -> dict[str, Any]:
        # `target`: the cut-off side (every fault names one), e.g. "broker-1" for isolate.
        target = ",".join(n.name for n in self.affected_nodes())
        out: dict[str, Any] = {
            "fault": self.kind,
            "target": target,
            "shape": self.label,
            "sides": self._names(),
        }
        return out if self.port is None else {**out, "port": self.port}

    def affected_nodes(self) -> list[Node]:
        """The smaller side(s): a majority keeps an up-to-date view of the cluster."""
        largest = max(len(side) for side in self.sides)
        return [n for side in self.sides if len(side) < largest for n in side] or self.sides[0]

    def rejoining(self) -> list[Node]:
        """The cut-off brokers: a leader among them was deposed while it kept its log."""
        return [n for n in self.affected_nodes() if n.is_broker]

    def _inject(self) -> None:
        ips = {n.name: n.ip() for side in self.sides for n in side}
        chain = iptables.chain_for(self.id)
        for i, side in enumerate(self.sides):
            peers = [ips[n.name] for j, other in enumerate(self.sides) if j != i for n in other]
            peer_ips = [ip for ip in peers if ip]
            for node in side:
                if node.is_up() and peer_ips:
                    self._touched.append(node)
                    iptables.install(node, chain, self._rules(peer_ips))
        if not self._touched:
            raise FaultError(f"partition {self._names()}: no running node to install rules in")

    def _rules(self, peer_ips: Sequence[str]) -> list[list[str]]:
        if self.port is None:
            return iptables.drop_peers(peer_ips)
        return iptables.drop_port_with(self.port, peer_ips)

    def _heal(self) -> None:
        chain = iptables.chain_for(self.id)
        for node in self._touched:
            iptables.remove(node, chain)
        self._touched.clear()


# --- the kinds the spec names, each a shape of PartitionFault ---------------------------------
class Isolate(FaultKind):
    """`{kind: isolate, target: ...}` (also `partition`): one node cut off from every other."""

    name: ClassVar[str] = "isolate"
    drawing: ClassVar[Drawing | None] = Drawing()
    aliases: ClassVar[tuple[str, ...]] = ("partition",)
    zookeeper_target: ClassVar[bool] = True

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> Fault:
        return PartitionFault.isolate(cluster, required(target))


class CutReplication(FaultKind):
    """`{kind: cut-replication, target: ...}`: one broker cut off from the other brokers."""

    name: ClassVar[str] = "cut-replication"
    drawing: ClassVar[Drawing | None] = Drawing()
    broker_only: ClassVar[bool] = True

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> Fault:
        return PartitionFault.from_brokers(cluster, required(target))


class CutZookeeper(FaultKind):
    """`{kind: cut-zookeeper, target: ...}`: one broker cut off from ZooKeeper."""

    name: ClassVar[str] = "cut-zookeeper"
    drawing: ClassVar[Drawing | None] = Drawing()
    modes: ClassVar[tuple[Mode, ...]] = ("zookeeper",)
    broker_only: ClassVar[bool] = True

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> Fault:
        return PartitionFault.from_zookeeper(cluster, required(target))
