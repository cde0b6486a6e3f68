"""The fault face of KafkaCluster: `cluster.kill(1)`, `cluster.isolate(2)`, `cluster.heal_all()`.

One-line delegates to harness.faults, kept apart from the cluster's lifecycle and admin
views. The arrow points one way: the cluster knows its faults, a fault knows only
`NodeControl` (harness.faults.control).
"""

from __future__ import annotations

from typing import Protocol

from harness.faults import healing
from harness.faults.bandwidth import BandwidthFault
from harness.faults.base import Fault
from harness.faults.clients import ClientCutFault
from harness.faults.clock import NodeClockSkewFault
from harness.faults.control import Booked, ChaosTarget, NodeControl, NodeRef
from harness.faults.disk_full import DiskFullFault
from harness.faults.kill import KillFault
from harness.faults.latency import LatencyFault
from harness.faults.links import Scope
from harness.faults.partition import PartitionFault
from harness.faults.pause import PauseFault
from harness.faults.reset import ResetFault
from harness.faults.restart import RestartFault
from harness.faults.stop import StopFault


class HealableCluster(NodeControl, Protocol):
    def wait_registered(self, deadline: float) -> None: ...


class FaultShortcuts:
    """Mixed into KafkaCluster (which provides NodeControl and wait_registered)."""

    @property
    def active_faults(self: NodeControl) -> list[Booked]:
        return list(self.faults)

    def kill(self: NodeControl, ref: NodeRef) -> Fault:
        return KillFault(self, ref).inject()

    def stop(self: NodeControl, ref: NodeRef) -> Fault:
        return StopFault(self, ref).inject()

    def restart(self: NodeControl, ref: NodeRef, hard: bool = False) -> Fault:
        return RestartFault(self, ref, hard=hard).inject()

    def pause(self: NodeControl, ref: NodeRef) -> Fault:
        return PauseFault(self, ref).inject()

    def isolate(self: NodeControl, ref: NodeRef) -> Fault:
        return PartitionFault.isolate(self, ref).inject()

    def cut_clients(self: NodeControl, ref: NodeRef) -> Fault:
        return ClientCutFault(self, ref).inject()

    def latency(
        self: NodeControl, ref: NodeRef, delay_ms: int, jitter_ms: int = 0, scope: Scope = "all"
    ) -> Fault:
        """Needs a cluster with link proxies, as bandwidth and reset do."""
        return LatencyFault(self, ref, delay_ms, jitter_ms, scope).inject()

    def bandwidth(self: NodeControl, ref: NodeRef, rate_kbit: int, scope: Scope = "all") -> Fault:
        return BandwidthFault(self, ref, rate_kbit, scope).inject()

    def reset(self: NodeControl, ref: NodeRef, scope: Scope = "all") -> Fault:
        """Reset the node's connections in scope once (returns when done)."""
        return ResetFault(self, ref, None, scope).inject()

    def disk_full(self: ChaosTarget, ref: NodeRef, log_dir: int | None = None) -> Fault:
        """Fill a broker's log directory (every one by default) until writes fail. Needs a
        cluster with sized log directories; the heal frees it and restarts the broker if
        Kafka took a directory offline or stopped."""
        return DiskFullFault(self, ref, log_dir).inject()

    def clock_skew(self: NodeControl, ref: NodeRef, offset_s: float) -> Fault:
        """The node's wall clock `offset_s` off until heal; needs a cluster with a fake clock."""
        return NodeClockSkewFault(self, ref, offset_s).inject()

    def start(self: NodeControl, ref: NodeRef) -> None:
        """Bring back a killed or stopped node (healing its fault) and wait until it has started."""
        healing.start(self, ref)

    def unpause(self: NodeControl, ref: NodeRef) -> None:
        healing.unpause(self, ref)

    def heal_all(self: HealableCluster) -> None:
        """Undo every fault, then sweep: nothing paused, stopped or partitioned remains."""
        healing.heal_all(self, self.wait_registered)
