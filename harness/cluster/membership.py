"""Who is in the cluster: spares join (add-broker), decommissioned brokers leave for good.

Mixed into KafkaCluster: the membership half of the `Operable` face of harness.faults.control.
Spares are planned with the cluster, their ports picked at start (harness.cluster.wiring).
"""

from __future__ import annotations

import time
from typing import Protocol

from harness.admin import ClusterAdmin
from harness.cluster.spare_start import start_spare
from harness.common.waiting import wait_until
from harness.errors import ConfigError
from harness.faults.control import ActiveFaults
from harness.nodes.node import ClusterNode, NodeRef
from harness.nodes.topology import INTERNAL_PORT, NodeSpec


class Members(Protocol):
    """What the mixin needs of the cluster it is mixed into."""

    mode: str
    version: str
    run_id: str
    start_timeout_s: float
    nodes: list[ClusterNode]
    retired: list[ClusterNode]
    faults: ActiveFaults
    _spares: list[NodeSpec]

    @property
    def admin(self) -> ClusterAdmin: ...
    @property
    def broker_nodes(self) -> list[ClusterNode]: ...
    def node(self, ref: NodeRef) -> ClusterNode: ...
    def trusted_brokers(self) -> list[ClusterNode]: ...
    def _running(self) -> object: ...
    def _node(self, spec: NodeSpec, image: str | None = None) -> ClusterNode: ...


class Membership:
    """Spares started and brokers retired while the cluster runs."""

    def spare_ids(self: Members) -> list[int]:
        """Broker ids declared as spares and not started yet, lowest first."""
        return sorted(s.kafka_id for s in self._spares)

    def add_broker(self: Members, broker_id: int) -> ClusterNode:
        """Start a spare and wait (start_timeout_s) until the cluster's metadata lists it.

        It joins `nodes` only then, so admin requests, heal_all and wait_registered count it
        from that moment on. A spare that does not come up is stopped, kept with the
        retired (its log is saved) and is no spare any more.
        """
        spec = next((s for s in self._spares if s.kafka_id == broker_id), None)
        if spec is None:
            raise ConfigError(
                f"broker {broker_id} is no spare of this cluster (spares left: "
                f"{Membership.spare_ids(self)})"
            )
        deadline = time.monotonic() + self.start_timeout_s

        def registered(node: ClusterNode) -> None:
            node.wait_started(max(1.0, deadline - time.monotonic()))
            wait_until(
                lambda: broker_id in self.admin.registered_brokers(timeout_s=5),
                max(0.0, deadline - time.monotonic()),
                f"broker {broker_id} registered",
                retry_on=Exception,
            )

        return start_spare(self, self._spares, spec, registered)

    def retire(self: Members, broker_id: int) -> None:
        """Stop a broker for good; heal_all no longer brings it back, wait_registered no longer
        expects it, save_logs still saves its log.

        The stop is graceful (controlled shutdown hands its leaderships over at once). A
        stopped KRaft broker stays registered (fenced) until the controller is told to drop
        it, so it is unregistered (kafka-cluster unregister); in ZooKeeper mode the
        registration ends with the broker's session. Faults still touching it are healed
        first: an iptables chain in a stopped container could never be removed.
        """
        node = self.node(broker_id)
        if not node.is_broker or len(self.broker_nodes) < 2:
            raise ConfigError(f"{node.name} cannot retire: it is no broker or the last one")
        for fault in reversed(list(self.faults)):
            if node in fault.affected_nodes():
                fault.heal()
        self.nodes.remove(node)  # first: a heal_all running now must not start it again
        self.retired.append(node)
        node.stop()
        deadline = time.monotonic() + self.start_timeout_s
        if self.mode == "kraft":
            _unregister(self, broker_id, deadline)
        wait_until(
            lambda: broker_id not in self.admin.registered_brokers(timeout_s=5),
            max(0.0, deadline - time.monotonic()),
            f"broker {broker_id} gone from the cluster's metadata",
            retry_on=Exception,
        )


def _unregister(cluster: Members, broker_id: int, deadline: float) -> None:
    """Kafka's ClusterTool unregister, run inside a trusted broker (3.9 and 4.x alike)."""

    def attempt() -> str:
        """Empty once unregistered (or never registered); else what the tool said."""
        errors = []
        for node in cluster.trusted_brokers():
            code, out = node.exec(
                "java",
                "-Xmx128m",
                "-cp",
                "/opt/kafka/libs/*",
                "org.apache.kafka.tools.ClusterTool",
                "unregister",
                "--bootstrap-server",
                f"{node.name}:{INTERNAL_PORT}",
                "--id",
                str(broker_id),
            )
            if code == 0 or "BrokerIdNotRegisteredException" in out:
                return ""
            errors.append(f"{node.name}: {out.strip().splitlines()[-1:] or code}")
        return "; ".join(errors) or "no running broker to ask"

    wait_until(
        attempt,
        max(0.0, deadline - time.monotonic()),
        f"broker {broker_id} unregistered",
        done=lambda error: not error,
        interval_s=2.0,
    )
