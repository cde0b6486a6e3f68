"""Every fault kind a spec may name, in one place: spec kind -> what makes the fault.

The spec's allowed kinds (harness.spec.models) and the nemesis both read this
table, so adding a kind is one new module in harness/faults plus one line here.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.errors import ConfigError
from harness.faults.base import Fault
from harness.faults.clients import ClientCutFault
from harness.faults.control import NodeControl, NodeRef
from harness.faults.kill import KillFault
from harness.faults.partition import PartitionFault
from harness.faults.pause import PauseFault
from harness.faults.restart import RestartFault
from harness.faults.stop import StopFault

FaultFactory = Callable[[NodeControl, NodeRef], Fault]

# Faults done to one node of the cluster, its target resolved when the fault fires.
NODE_FAULTS: dict[str, FaultFactory] = {
    "kill": KillFault,
    "stop": StopFault,
    "restart": RestartFault,
    "pause": PauseFault,
    "isolate": PartitionFault.isolate,
    "cut-clients": ClientCutFault,
    "cut-replication": PartitionFault.from_brokers,
}

# Faults the nemesis does to the workload's consumer members (target consumer:<set>/<member>).
CONSUMER_FAULTS: tuple[str, ...] = ("consumer-crash",)

FAULT_KINDS: tuple[str, ...] = (*NODE_FAULTS, *CONSUMER_FAULTS)


def is_consumer_fault(kind: str) -> bool:
    return kind in CONSUMER_FAULTS


def make_fault(kind: str, cluster: NodeControl, target: NodeRef) -> Fault:
    """The (not yet injected) fault of this spec kind on this node."""
    factory = NODE_FAULTS.get(kind)
    if factory is None:
        raise ConfigError(
            f"no node fault of kind {kind!r}; kinds: {', '.join(NODE_FAULTS)}"
            + (" (a consumer fault: the nemesis plays it)" if is_consumer_fault(kind) else "")
        )
    return factory(cluster, target)
