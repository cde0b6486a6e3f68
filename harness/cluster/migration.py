"""A ZooKeeper-mode cluster's migration to KRaft (KIP-866), as the cluster does each step.

Mixed into KafkaCluster: the `Migratable` face of harness.faults.control that the
migrate-to-kraft operation acts through. The controllers (cluster.migration_controllers)
are planned with the cluster, their ports too, but started here, formatted with the id
ZooKeeper holds; each roll is a graceful stop and a new container with the node's log
directories and the phase's server.properties (harness.nodes.migration_config). The cluster
answers as KRaft (`mode`, the active controller from the quorum) from the moment its
brokers run in KRaft mode.
"""

from __future__ import annotations

import re
import time
from typing import Protocol

import docker

from harness.errors import ConfigError, HarnessError
from harness.nodes.images import require_image
from harness.nodes.migration_config import PHASES, Phase, migration_properties
from harness.nodes.node import ClusterNode, NodeRef
from harness.nodes.supervised_start import start_supervised
from harness.nodes.topology import ZOOKEEPER_PORT, Mode, NodeSpec
from harness.results import events as ev
from harness.results.history import History

# The active KRaft controller's line once it has copied ZooKeeper's metadata (dual-write from
# then on), and every controller's as it replays the record of that state (3.9.2's wording).
MIGRATED = (
    "Completed migration of metadata from ZooKeeper to KRaft",
    "changing the migration state from PRE_MIGRATION to MIGRATION",
)
# `get /cluster/id` prints the znode's JSON: {"version":"1","id":"<22 chars>"}.
_CLUSTER_ID = re.compile(r'\{"version":"\d+","id":"(?P<id>[A-Za-z0-9_-]{22})"\}')


class Migrating(Protocol):
    """What the mixin needs of the cluster it is mixed into."""

    migration_specs: list[NodeSpec]  # the planned controllers
    kraft_controlled: bool
    mode: Mode
    version: str
    run_id: str
    broker_config: dict[str, object]
    nodes: list[ClusterNode]

    def _running(self) -> object: ...
    def _node(
        self,
        spec: NodeSpec,
        image: str | None = None,
        *,
        properties: str | None = None,
        cluster_id: str | None = None,
        persistent: bool = False,
    ) -> ClusterNode: ...
    def node(self, ref: NodeRef) -> ClusterNode: ...
    def wait_registered(self, deadline: float) -> None: ...
    @property
    def broker_nodes(self) -> list[ClusterNode]: ...
    @property
    def history(self) -> History: ...
    @property
    def start_timeout_s(self) -> float: ...


class KraftMigration:
    """The migration's steps as the cluster does them (the `Migratable` face)."""

    def migration_controller_ids(self: Migrating) -> list[int]:
        """The planned controllers' ids (empty: the cluster cannot migrate)."""
        return [s.kafka_id for s in self.migration_specs]

    def zookeeper_cluster_id(self: Migrating) -> str:
        """The cluster id ZooKeeper holds (`/cluster/id`), read with ZooKeeper's own shell as
        Kafka's guide does: the controllers are formatted with it."""
        code, out = self.node("zookeeper").exec(
            "java",
            "-Xmx64m",
            "-cp",
            "/opt/kafka/libs/*",
            "org.apache.zookeeper.ZooKeeperMain",
            "-server",
            f"localhost:{ZOOKEEPER_PORT}",
            "get",
            "/cluster/id",
        )
        match = _CLUSTER_ID.search(out)
        if code != 0 or match is None:
            raise HarnessError(f"reading /cluster/id from ZooKeeper: exit {code}: {out[-300:]}")
        return match["id"]

    def start_migration_controllers(self: Migrating, cluster_id: str) -> None:
        """Format and start the planned controllers in migration mode, all at once (a quorum
        needs a majority); wait until each logged start-up. They are cluster nodes from then on."""
        self._running()  # HarnessError if the cluster is not running
        if not self.migration_specs:
            raise ConfigError("this cluster plans no controllers to migrate onto")
        if any(n.spec in self.migration_specs for n in self.nodes):
            raise HarnessError("the migration's controllers were started already")
        image = require_image(docker.from_env(), self.version)
        started = []
        for spec in self.migration_specs:
            node = self._node(
                spec,
                image,
                properties=_properties(self, "controller", spec),
                cluster_id=cluster_id,
                persistent=True,  # finalizing replaces its container
            )
            self.nodes.append(node)
            node.create()
            started.append(node)
        for node in started:
            node.wait_started(self.start_timeout_s)
        self.history.append(
            ev.MIGRATION_CONTROLLERS, nodes=[n.name for n in started], cluster_id=cluster_id
        )

    def migration_roll(self: Migrating, ref: NodeRef, phase: str) -> None:
        """Stop the node (controlled shutdown), start it with its log directories and the
        phase's properties, wait until it is back (started again while it exits early, as
        after a kill; a broker: registered)."""
        if phase not in PHASES:
            raise ConfigError(f"no migration phase {phase!r} (phases: {', '.join(PHASES)})")
        node = self.node(ref)
        if node.status() == "paused":
            node.unpause()
        if node.status() == "running":
            node.stop()
        image = require_image(docker.from_env(), node.version or self.version)
        node.replace(image, _properties(self, phase, node.spec))
        deadline = time.monotonic() + self.start_timeout_s
        start_supervised(node, self.history, self.start_timeout_s, started=True)
        if node.is_broker:
            self.wait_registered(deadline)
        self.history.append(ev.NODE_REPLACED, node=node.name, phase=phase)

    def migration_completed(self: Migrating) -> bool:
        """Whether a controller logged that ZooKeeper's metadata is in KRaft (dual-write on)."""
        controllers = [n for n in self.nodes if n.spec in self.migration_specs]
        done = any(line in n.logs() for n in controllers for line in MIGRATED)
        if done:
            self.kraft_controlled = True  # the quorum's leader is ZooKeeper's controller now
        return done

    def become_kraft(self: Migrating) -> None:
        """Every broker runs in KRaft mode: the cluster is a KRaft cluster from now on."""
        self.mode = "kraft"
        self.kraft_controlled = True
        self.history.append(ev.CLUSTER_MODE, mode="kraft", run_id=self.run_id)


def _properties(cluster: Migrating, phase: Phase, spec: NodeSpec) -> str:
    brokers = [n.spec for n in cluster.broker_nodes]
    return migration_properties(
        phase, spec, brokers, cluster.migration_specs, cluster.broker_config, cluster.version
    )
