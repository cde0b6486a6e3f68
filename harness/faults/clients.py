"""Cut a broker off from clients only: its host-facing listener drops every packet."""

from __future__ import annotations

from typing import Any, ClassVar

from harness.errors import ConfigError
from harness.faults import iptables
from harness.faults.base import Fault, NodeFault
from harness.faults.control import ChaosTarget, NodeControl, NodeRef
from harness.faults.drawing import Drawing
from harness.faults.kind import FaultKind, required


class ClientCutFault(NodeFault):
    """Replication and the controller quorum keep working; producers and consumers time out."""

    kind = "cut-clients"

    def __init__(self, cluster: NodeControl, target: NodeRef) -> None:
        super().__init__(cluster, target)
        if self.node.host_port is None:
            raise ConfigError(f"{self.node.name} has no client listener to cut")
        self.port: int = self.node.host_port

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "port": self.port}

    def _inject(self) -> None:
        iptables.install(self.node, iptables.chain_for(self.id), iptables.drop_port(self.port))

    def _heal(self) -> None:
        iptables.remove(self.node, iptables.chain_for(self.id))


class CutClients(FaultKind):
    """`{kind: cut-clients, target: ...}`: a broker's client listener drops every packet."""

    name: ClassVar[str] = "cut-clients"
    drawing: ClassVar[Drawing | None] = Drawing()
    broker_only: ClassVar[bool] = True

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> Fault:
        return ClientCutFault(cluster, required(target))
