"""How the cluster's nodes are made: host ports, the planned nodes, and each node's container.

Mixed into KafkaCluster. A node's container is its role's properties on the cluster's image
and network, plus what the cluster's capabilities add to it (harness.nodes.capabilities:
proxies, a fake clock, log directories); ZooKeeper gets none of them. The same recipe makes
the nodes at start, a spare when it is added and a migration's controllers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from testcontainers.core.network import Network

from harness.errors import HarnessError
from harness.nodes.capabilities import Capabilities
from harness.nodes.dynamic_quorum import format_args
from harness.nodes.migration_config import plan_migration_controllers
from harness.nodes.node import ClusterNode
from harness.nodes.ports import free_ports
from harness.nodes.topology import (
    Mode,
    NodeSpec,
    kafka_properties,
    plan_nodes,
    plan_spare_controllers,
    plan_spares,
    with_metrics_ports,
    zookeeper_properties,
)


@dataclass(frozen=True)
class Wired:
    """What every node of a started cluster is made on: set when its nodes are created."""

    image: str
    network: Network
    specs: list[NodeSpec]  # the nodes it started with
    cluster_id: str | None  # KRaft's (None: ZooKeeper mode)


class Wirable(Protocol):
    """What the mixin needs of the cluster it is mixed into."""

    mode: Mode
    version: str
    run_id: str
    broker_count: int
    controller_count: int
    spare_count: int
    spare_controller_count: int
    dynamic_quorum: bool
    migration_controller_count: int
    metrics: bool
    broker_config: dict[str, object]
    capabilities: Capabilities
    nodes: list[ClusterNode]
    migration_specs: list[NodeSpec]
    _spares: list[NodeSpec]
    _spare_controllers: list[NodeSpec]
    _wired: Wired | None


class NodeWiring:
    """Plans the nodes and makes each one's container (not started)."""

    def _plan(self: Wirable) -> tuple[list[int], list[NodeSpec]]:
        """Host ports and nodes; the spares' ports are picked now with the others (kept aside)."""
        clients = self.broker_count + self.spare_count
        # planned, started later
        later = self.spare_count + self.spare_controller_count + self.migration_controller_count
        kafka_nodes = self.broker_count + self.controller_count + later
        ports = free_ports(clients + (kafka_nodes if self.metrics else 0))
        self._spares = plan_spares(self.broker_count, ports[self.broker_count : clients])
        self._spare_controllers = plan_spare_controllers(
            self.controller_count, self.spare_controller_count
        )
        self.migration_specs = plan_migration_controllers(self.migration_controller_count)
        specs = plan_nodes(self.mode, self.broker_count, self.controller_count, ports[:clients])
        if self.metrics:  # one more port per Kafka node (spares too): its /metrics
            started = kafka_nodes - later
            specs = with_metrics_ports(specs, ports[clients : clients + started])
            rest = iter(ports[clients + started :])
            self._spares = with_metrics_ports(self._spares, [next(rest) for _ in self._spares])
            self._spare_controllers = with_metrics_ports(
                self._spare_controllers, [next(rest) for _ in self._spare_controllers]
            )
            self.migration_specs = with_metrics_ports(self.migration_specs, list(rest))
        return ports, specs

    @staticmethod
    def _metrics_ports(specs: list[NodeSpec]) -> dict[str, int]:
        return {s.name: s.metrics_port for s in specs if s.metrics_port is not None}

    def metrics_targets(self: Wirable) -> dict[str, int]:
        """Node name -> host port of its /metrics, for every Kafka node of the cluster now
        (empty without metrics); a node that is down answers nothing there."""
        return NodeWiring._metrics_ports([n.spec for n in self.nodes])

    def _running(self: Wirable) -> Wired:
        if self._wired is None:
            raise HarnessError("the cluster is not running; use it inside 'with KafkaCluster(...)'")
        return self._wired

    def _node(
        self: Wirable,
        spec: NodeSpec,
        image: str | None = None,
        *,
        properties: str | None = None,
        cluster_id: str | None = None,
        persistent: bool = False,
    ) -> ClusterNode:
        """The node's container on `image` (default: the cluster's at start) with its role's
        properties (or these, formatted with `cluster_id`) and its capabilities' wiring; `persistent`: its log
        directories outlive the container whatever the cluster's are."""
        wired = NodeWiring._running(self)
        image = image or wired.image
        if spec.role == "zookeeper":  # no capability: it opens no link; brokers' proxies reach it
            return ClusterNode(
                spec, image, wired.network, self.run_id, zookeeper_properties(), None
            )
        # A spare's name resolves through proxies too.
        everyone = [*wired.specs, *self._spares, *self._spare_controllers]
        wiring = self.capabilities.wire(spec, everyone, self.run_id)
        if persistent:
            wiring = wiring.persisted()
        if properties is None:
            backend, dirs = wiring.client_backend_port, len(wiring.log_dirs)
            properties = kafka_properties(
                self.mode,
                spec,
                wired.specs,
                self.broker_config,
                backend,
                dirs,
                dynamic_quorum=self.dynamic_quorum,
            )
        formatted_with = cluster_id or wired.cluster_id
        quorum = None
        if self.dynamic_quorum and formatted_with is not None:
            voters = [s for s in wired.specs if s.is_controller]  # the initial voters
            quorum = format_args(spec, voters, formatted_with)
        return ClusterNode(
            spec,
            image,
            wired.network,
            self.run_id,
            properties,
            formatted_with,
            wiring,
            version=self.version,
            format_args=quorum,
        )
