"""Every fault kind a spec may name, in one place: spec kind -> what makes the fault.

The spec's allowed kinds and option keys (harness.spec) and the nemesis both read this
table, so adding a kind is one new module in harness/faults plus one entry here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from harness.errors import ConfigError
from harness.faults.add_broker import AddBrokerFault
from harness.faults.add_partitions import AddPartitionsFault
from harness.faults.base import Fault
from harness.faults.clients import ClientCutFault
from harness.faults.control import ChaosTarget, NodeRef
from harness.faults.decommission import DecommissionFault
from harness.faults.kill import KillFault
from harness.faults.lossy import LossyFault
from harness.faults.options import FaultOptions
from harness.faults.partition import PartitionFault
from harness.faults.pause import PauseFault
from harness.faults.producer import PRODUCER_FAULT_CLASSES
from harness.faults.quorum import QuorumCutFault
from harness.faults.reassign import ReassignFault
from harness.faults.restart import RestartFault
from harness.faults.rolling_restart import RollingRestartFault
from harness.faults.split import split
from harness.faults.stop import StopFault

# What a kind's `target` names:
#   node   - a node, resolved when the fault fires (broker:<id>, leader-of:..., random, ...)
#   split  - a node as `node`, or none at all when the spec gives `sides`
#   topic  - <topic> or <topic>/<partition> (the spec's topic when not given)
#   spare  - broker:<id> of a spare broker, or none for the next spare
#   none   - nothing (the kind's options say what it acts on)
TargetStyle = Literal["node", "split", "topic", "spare", "none"]
FaultFactory = Callable[[ChaosTarget, NodeRef | None, FaultOptions], Fault]


@dataclass(frozen=True)
class FaultKind:
    make: FaultFactory
    target: TargetStyle = "node"
    options: tuple[str, ...] = ()  # FaultOptions names this kind takes
    operation: bool = False  # done once when it fires: takes no duration_s
    modes: tuple[str, ...] = ("kraft", "zookeeper")


def _node(cls: Callable[[ChaosTarget, NodeRef], Fault]) -> FaultFactory:
    def make(cluster: ChaosTarget, target: NodeRef | None, _options: FaultOptions) -> Fault:
        return cls(cluster, _required(target))

    return make


def _required(target: NodeRef | None) -> NodeRef:
    if target is None:
        raise ConfigError("this fault kind needs a target")
    return target


def _restart(cluster: ChaosTarget, target: NodeRef | None, options: FaultOptions) -> Fault:
    return RestartFault(cluster, _required(target), hard=bool(options.hard))


def _kill(cluster: ChaosTarget, target: NodeRef | None, options: FaultOptions) -> Fault:
    return KillFault(cluster, _required(target), wipe=bool(options.wipe))


def _lossy(cluster: ChaosTarget, target: NodeRef | None, options: FaultOptions) -> Fault:
    return LossyFault(cluster, _required(target), options)


# Faults done to the cluster: to one node (its target resolved when the fault fires), to
# the network between nodes, or operations an operator does (reassign, add-broker...).
KINDS: dict[str, FaultKind] = {
    "kill": FaultKind(_kill, options=("wipe",)),
    "stop": FaultKind(_node(StopFault)),
    "restart": FaultKind(_restart, options=("hard",), operation=True),
    "pause": FaultKind(_node(PauseFault)),
    "isolate": FaultKind(_node(PartitionFault.isolate)),
    "cut-clients": FaultKind(_node(ClientCutFault)),
    "cut-replication": FaultKind(_node(PartitionFault.from_brokers)),
    "cut-quorum": FaultKind(_node(QuorumCutFault), modes=("kraft",)),
    "cut-zookeeper": FaultKind(_node(PartitionFault.from_zookeeper), modes=("zookeeper",)),
    "split": FaultKind(split, "split", ("sides", "side", "zookeeper_side")),
    "lossy": FaultKind(_lossy, options=("loss", "scope")),
    "reassign": FaultKind(
        ReassignFault, "topic", ("to", "replication_factor", "timeout_s"), operation=True
    ),
    "add-partitions": FaultKind(
        AddPartitionsFault, "topic", ("count", "timeout_s"), operation=True
    ),
    "add-broker": FaultKind(AddBrokerFault, "spare", ("timeout_s",), operation=True),
    "decommission": FaultKind(DecommissionFault, "node", ("timeout_s",), operation=True),
    "rolling-restart": FaultKind(
        RollingRestartFault, "none", ("brokers", "hard", "timeout_s"), operation=True
    ),
}

# Faults the nemesis does to the workload's consumer members (target consumer:<set>/<member>);
# pipeline-crash is a consumer-crash of a pipeline member (random: one of the pipeline's).
PIPELINE_CRASH = "pipeline-crash"
CONSUMER_FAULTS: tuple[str, ...] = ("consumer-crash", PIPELINE_CRASH)

# Faults the nemesis does to the producer process (target `producer`): SIGKILL, SIGSTOP.
PRODUCER_FAULTS: tuple[str, ...] = tuple(PRODUCER_FAULT_CLASSES)

FAULT_KINDS: tuple[str, ...] = (*KINDS, *CONSUMER_FAULTS, *PRODUCER_FAULTS)


def is_consumer_fault(kind: str) -> bool:
    return kind in CONSUMER_FAULTS


def is_producer_fault(kind: str) -> bool:
    return kind in PRODUCER_FAULTS


def is_operation(kind: str) -> bool:
    """Done once when it fires (restart, reassign...): no duration, nothing to heal later."""
    entry = KINDS.get(kind)
    return entry is not None and entry.operation


def kind_of(kind: str) -> FaultKind:
    entry = KINDS.get(kind)
    if entry is None:
        raise ConfigError(
            f"no cluster fault of kind {kind!r}; kinds: {', '.join(KINDS)}"
            + (
                " (a consumer or producer fault: the nemesis plays it)"
                if is_consumer_fault(kind) or is_producer_fault(kind)
                else ""
            )
        )
    return entry


def make_fault(
    kind: str,
    cluster: ChaosTarget,
    target: NodeRef | None,
    options: FaultOptions | None = None,
) -> Fault:
    """The (not yet injected) fault of this spec kind on this target."""
    return kind_of(kind).make(cluster, target, options or FaultOptions())
