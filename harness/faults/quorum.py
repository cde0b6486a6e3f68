"""Cut one node from the KRaft controller quorum, and from nothing else.

Only controller-listener traffic (CONTROLLER_PORT) between the target and the other voters
is dropped, both directions. In combined mode the other voters are also the other brokers:
an address-wide cut (PartitionFault.from_controllers) would stop replication too, this one
leaves it and the clients alone, so what is seen is the quorum's doing (fencing, elections).
"""

from __future__ import annotations

from typing import ClassVar

from harness.errors import ConfigError
from harness.faults.base import Fault
from harness.faults.control import ChaosTarget, NodeControl, NodeRef
from harness.faults.drawing import Drawing
from harness.faults.kind import CellView, FaultKind, Mode, Problem, required
from harness.faults.partition import PartitionFault
from harness.nodes.topology import CONTROLLER_PORT


class QuorumCutFault(PartitionFault):
    """History: shape cut-quorum, sides [[target], [other voters]], port 9093."""

    def __init__(self, cluster: NodeControl, target: NodeRef) -> None:
        if cluster.mode != "kraft":
            raise ConfigError("cut-quorum needs mode='kraft' (a controller quorum)")
        node = cluster.node(target)
        if node.node_id is None:
            raise ConfigError(f"cut-quorum acts on a broker or a controller, not {node.name}")
        voters = [n.name for n in cluster.nodes if n.is_controller and n is not node]
        if not voters:
            raise ConfigError(f"cut-quorum: no controller other than {node.name} to cut it from")
        super().__init__(cluster, [[node.name], voters], "cut-quorum", port=CONTROLLER_PORT)


class CutQuorum(FaultKind):
    """`{kind: cut-quorum, target: ...}`: the target loses the controller quorum (KRaft)."""

    name: ClassVar[str] = "cut-quorum"
    drawing: ClassVar[Drawing | None] = Drawing()
    modes: ClassVar[tuple[Mode, ...]] = ("kraft",)

    def rules(self, cell: CellView) -> list[Problem]:
        voters = len(cell.controllers) or len(cell.brokers)
        if cell.mode == "kraft" and voters < 2:
            return [("kind", "cut-quorum needs a quorum of at least two controllers")]
        return []

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> Fault:
        return QuorumCutFault(cluster, required(target))
