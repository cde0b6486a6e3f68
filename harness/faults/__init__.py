"""Faults with inject()/heal(), usable directly or through KafkaCluster's shortcuts.

One module per kind (its spec model, rules, flags and fault: `kind.FaultKind`); `registry`
lists the kinds; every fault acts through the protocols of `control` (NodeControl, Node,
ClusterView), never the cluster class.
"""

from harness.faults.base import Fault, NodeFault
from harness.faults.clients import ClientCutFault
from harness.faults.kill import KillFault
from harness.faults.partition import PartitionFault
from harness.faults.pause import PauseFault
from harness.faults.restart import RestartFault
from harness.faults.stop import StopFault
from harness.faults.targets import Target

__all__ = [
    "ClientCutFault",
    "Fault",
    "KillFault",
    "NodeFault",
    "PartitionFault",
    "PauseFault",
    "RestartFault",
    "StopFault",
    "Target",
]
