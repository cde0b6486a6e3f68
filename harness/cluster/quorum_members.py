"""Who votes in a dynamic KRaft quorum (KIP-853): spare controllers start, removed ones leave.

Mixed into KafkaCluster: the quorum half of the `QuorumControl` face of harness.faults.control.
The voter changes themselves (Kafka's add-controller / remove-controller) are the operations'
(harness.faults.add_controller, harness.faults.remove_controller); the cluster starts and
retires the nodes and answers what the quorum says (`describe --status`, Kafka's tool).
"""

from __future__ import annotations

import time
from typing import Protocol

from docker.errors import APIError

from harness.cluster.spare_start import start_spare
from harness.errors import ConfigError, HarnessError
from harness.faults.control import ActiveFaults
from harness.nodes.dynamic_quorum import QuorumStatus, describe_argv, gist, parse_status
from harness.nodes.node import ClusterNode
from harness.nodes.topology import NodeSpec
from harness.results import events as ev
from harness.results.history import History


class QuorumMembers(Protocol):
    """What the mixin needs of the cluster it is mixed into."""

    version: str
    run_id: str
    start_timeout_s: float
    dynamic_quorum: bool
    nodes: list[ClusterNode]
    retired: list[ClusterNode]
    faults: ActiveFaults
    history: History
    _spare_controllers: list[NodeSpec]

    def node(self, ref: int | str) -> ClusterNode: ...
    def _running(self) -> object: ...
    def _node(self, spec: NodeSpec, image: str | None = None) -> ClusterNode: ...


class QuorumMembership:
    """Spare controllers started, removed voters retired, the quorum described."""

    def spare_controller_ids(self: QuorumMembers) -> list[int]:
        """Controller ids declared as spares (cluster.spare_controllers), not started yet."""
        return sorted(s.kafka_id for s in self._spare_controllers)

    def start_spare_controller(self: QuorumMembers, node_id: int) -> ClusterNode:
        """Start a spare controller and wait (start_timeout_s) until it has started: formatted
        with --no-initial-controllers, it fetches the metadata log as an observer.

        It joins `nodes` then (it is no voter until add-controller makes it one). A spare
        that does not come up is stopped, kept with the retired (its log is saved) and is no
        spare any more."""
        spec = next((s for s in self._spare_controllers if s.kafka_id == node_id), None)
        if spec is None:
            left = QuorumMembership.spare_controller_ids(self)
            raise ConfigError(f"{node_id} is no spare controller of this cluster (left: {left})")

        def started(node: ClusterNode) -> None:
            node.wait_started(self.start_timeout_s)

        return start_spare(self, self._spare_controllers, spec, started)

    def quorum_status(self: QuorumMembers, timeout_s: float = 60) -> QuorumStatus:
        """The quorum as Kafka's tool describes it (`describe --status`), asked inside each
        running controller in turn (the tool starts a JVM: seconds on a busy machine)."""
        deadline = time.monotonic() + timeout_s
        running = [n for n in self.nodes if n.spec.is_controller and n.is_up()]
        names = [n.name for n in running]
        errors: list[str] = []
        for node in running:
            if time.monotonic() > deadline:
                break
            try:
                code, out = node.exec(*describe_argv(names))
            except APIError as exc:  # it went down between the look and the exec
                errors.append(f"{node.name}: {exc.explanation or exc}")
                continue
            status = parse_status(out) if code == 0 else None
            if status is not None:
                return status
            errors.append(f"{node.name}: exit {code}: {gist(out)}")
        raise HarnessError(f"no running controller described the quorum: {errors or 'none up'}")

    def retire_controller(self: QuorumMembers, node_id: int, stop: bool = True) -> None:
        """A controller removed from the quorum leaves the cluster for good: heal_all no
        longer brings it back, save_logs still saves its log.

        A fault still touching it is healed while it runs (an iptables chain in a stopped
        container could never go); one that keeps it down (kill, stop) is closed without its
        heal, which would start it: a removed voter that comes back with its old log would
        still count itself a voter. `stop=False` leaves a running node running (outside the
        cluster's nodes)."""
        node = self.node(node_id)
        if not node.is_controller or node.is_broker:
            raise ConfigError(f"{node.name} is no dedicated controller: it cannot be retired so")
        up = node.is_up()
        for fault in reversed(list(self.faults)):
            if node not in fault.affected_nodes():
                continue
            if up:
                fault.heal()
            else:
                fault.abandon(f"{node.name} removed from the controller quorum")
        self.nodes.remove(node)  # first: a heal_all running now must not start it again
        self.retired.append(node)
        if stop and node.status() != "exited":
            node.stop()
        self.history.append(ev.QUORUM_RETIRED, node=node.name, stopped=stop, was_up=up)
