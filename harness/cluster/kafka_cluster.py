"""A real multi-broker Kafka cluster in Docker, as a context manager that always cleans up."""

from __future__ import annotations

import contextlib
import gc
import time
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Unpack, cast

import docker
from confluent_kafka import KafkaError, Producer
from docker.errors import APIError
from testcontainers.core.network import Network

from harness.admin import ClusterAdmin
from harness.cluster.membership import Membership
from harness.cluster.migration import KraftMigration
from harness.cluster.node_versions import NodeVersions
from harness.cluster.operations import ClusterOperations
from harness.cluster.quorum_members import QuorumMembership
from harness.cluster.segment_capture import SegmentCapture
from harness.cluster.shortcuts import FaultShortcuts
from harness.cluster.spare_start import PORT_ATTEMPTS
from harness.cluster.views import AdminViews
from harness.cluster.wiring import NodeWiring, Wired
from harness.common.client_log import CLIENT_LOGGER
from harness.common.waiting import wait_until
from harness.errors import ClusterStartError, ConfigError, HarnessError
from harness.faults.base import refused_nodes
from harness.faults.control import ActiveFaults, Node
from harness.nodes.capabilities import AnyCapability, Capabilities, CapabilityOptions, Shape
from harness.nodes.images import docker_client, require_image
from harness.nodes.migration_config import validate_migration
from harness.nodes.node import ClusterNode, NodeRef, disable_ryuk
from harness.nodes.ports import busy_ports
from harness.nodes.reaper import RunGuard, remove_dead_runs, remove_run, run_labels
from harness.nodes.topology import DEFAULT_VERSION, Mode, NodeSpec, new_cluster_id, validate
from harness.nodes.watchdog import start_watchdog
from harness.results import events as ev
from harness.results.history import History

READY_TOPIC = "__kafka_chaos_ready"

__all__ = ["KafkaCluster", "docker_client"]


class KafkaCluster(
    NodeWiring,
    Membership,
    QuorumMembership,
    AdminViews,
    ClusterOperations,
    NodeVersions,
    KraftMigration,
    FaultShortcuts,
):
    """Brokers (KRaft combined nodes, dedicated controllers, or ZooKeeper mode) on a private network.

    Broker settings not given keep Kafka's own defaults, so a default-config
    incident can be reproduced as it happens in production. This module is the lifecycle;
    how its nodes are made is NodeWiring, who joins and leaves Membership, what the cluster
    looks like (leader, ISR, controller...) AdminViews, what can be done to it (kill,
    isolate, heal_all...) FaultShortcuts. Faults act on it through
    harness.faults.control.NodeControl, never through this class.

    `**capabilities`: what every node may be built with, off unless given: each capability's
    keywords (harness.nodes.capabilities; docs/cluster-api.md lists them).
    """

    def __init__(
        self,
        mode: str = "kraft",
        brokers: int = 3,
        version: str = DEFAULT_VERSION,
        broker_config: Mapping[str, object] | None = None,
        *,
        controllers: int = 0,
        spare_brokers: int = 0,
        dynamic_quorum: bool = False,
        spare_controllers: int = 0,
        run_id: str | None = None,
        history: History | None = None,
        start_timeout_s: float = 180,
        logs_dir: Path | None = None,
        metrics: bool = False,
        migration_controllers: int = 0,
        **capabilities: Unpack[CapabilityOptions],
    ) -> None:
        config = dict(broker_config or {})
        self.capabilities = Capabilities(capabilities)
        validate(
            mode,
            brokers,
            version,
            controllers,
            config,
            spare_brokers,
            dynamic_quorum=dynamic_quorum,
            spare_controllers=spare_controllers,
        )
        for _key, why in self.capabilities.problems(Shape(mode, version, migration_controllers)):
            raise ConfigError(why)
        validate_migration(mode, version, migration_controllers, spare_brokers)
        self.capabilities.prepare()  # e.g. the Toxiproxy server: a missing one fails here
        self.mode: Mode = cast(Mode, mode)
        self.broker_count = brokers
        self.version = version
        self.broker_config = config
        self.controller_count = controllers
        self.spare_count = spare_brokers
        # KIP-853: nodes find the quorum through controller.quorum.bootstrap.servers, the
        # controllers are formatted as its initial voters (harness.nodes.dynamic_quorum), and
        # spare controllers wait to be added (add-controller).
        self.dynamic_quorum = dynamic_quorum
        self.spare_controller_count = spare_controllers
        self.run_id = run_id or uuid.uuid4().hex[:10]
        self.history = history or History()
        self.start_timeout_s = start_timeout_s
        self.logs_dir = logs_dir
        # Every Kafka node's JVM with the Prometheus JMX exporter agent, its /metrics published
        # on 127.0.0.1 (metrics_targets; harness.cluster.metrics_scraper reads them).
        self.metrics = metrics
        # KRaft controllers a ZooKeeper cluster migrates onto (harness.cluster.migration):
        # planned with the cluster, started by the migration. Whether a KRaft quorum is the
        # active controller (KRaft, or a migration past its metadata copy).
        self.migration_controller_count = migration_controllers
        self.migration_specs: list[NodeSpec] = []
        self.kraft_controlled = self.mode == "kraft"
        self.nodes: list[ClusterNode] = []
        self.retired: list[ClusterNode] = []  # decommissioned: stopped for good, logs kept
        self._spares: list[NodeSpec] = []  # planned at start, created by add_broker
        self._spare_controllers: list[NodeSpec] = []  # ... created by start_spare_controller
        self._wired: Wired | None = None
        self.faults = ActiveFaults()  # injected and not yet healed, kept by the faults
        self._guard: RunGuard | None = None
        self._admin: ClusterAdmin | None = None
        # Broker forensics: where brokers' partitions are copied before they rejoin (set by
        # the runner; None: no copies).
        self.segment_capture: SegmentCapture | None = None
        self.start_record: dict[str, Any] = {}  # cluster.start's fields (rebind repeats them)
        self.served: list[str] = []  # the cells it ran (rebind): the first, then each reuse

    def has(self, capability: AnyCapability) -> bool:
        """NodeControl's: whether every node is built with this capability."""
        return self.capabilities.has(capability)

    # --- lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> KafkaCluster:
        return self.up()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def up(self) -> KafkaCluster:
        if self._guard is not None:  # reused (rebind): already up, its nodes checked then
            self.history.append(
                ev.CLUSTER_READY, run_id=self.run_id, bootstrap=self.bootstrap_servers, reused=True
            )
            return self
        disable_ryuk()
        client = docker_client()
        image = require_image(client, self.version)
        remove_dead_runs(client)
        # Before anything is created: from here on a SIGKILL of this process leaves nothing.
        watchdog = start_watchdog(self.run_id)
        self._guard = RunGuard(client, self.run_id, watchdog).__enter__()
        try:
            self._create(image, client)
            self._wait_ready(time.monotonic() + self.start_timeout_s)
        except BaseException:
            self.close()
            raise
        self.history.append(ev.CLUSTER_READY, run_id=self.run_id, bootstrap=self.bootstrap_servers)
        return self

    @property
    def warm(self) -> bool:
        """Whether it ran a cell's workload before this one (rebind): its JVMs are warm, no
        warm-up needed."""
        return len(self.served) > 1

    def rebind(self, history: History, logs_dir: Path | None, cell: str) -> None:
        """Hand this running cluster to the next cell (explore's reuse, harness.explore.
        cluster_pool): its history and logs folder, every node's log cut here, and the
        cell's history told which cluster it runs on (`cluster.start` again, `reused`: the
        cells it served before, `first_cell`: the one that started it)."""
        self.history = history
        self.logs_dir = logs_dir
        for node in self.nodes:
            node.mark_logs()
        self.served.append(cell)
        self.history.append(
            ev.CLUSTER_START,
            **self.start_record,
            reused=len(self.served) - 1,
            first_cell=self.served[0],
        )

    def _create(self, image: str, client: docker.DockerClient) -> None:
        """Network, then every node; on a port taken since it was picked, new ports and again."""
        network = Network(docker_network_kw={"labels": run_labels(self.run_id)})
        network.name = f"kc-{self.run_id}"
        network.create()
        ports, specs = self._plan()
        cluster_id = new_cluster_id() if self.mode == "kraft" else None
        self.start_record = dict(
            run_id=self.run_id,
            mode=self.mode,
            version=self.version,
            nodes=[s.name for s in specs],
            **self.capabilities.record(),
            **({"metrics_ports": self._metrics_ports(specs)} if self.metrics else {}),
            broker_config=self.broker_config,
            **({"spares": [s.name for s in self._spares]} if self._spares else {}),
            **({"quorum": self._quorum_record(specs)} if self.dynamic_quorum else {}),
            **(
                {"migration_controllers": [s.name for s in self.migration_specs]}
                if self.migration_specs
                else {}
            ),
        )
        self.history.append(ev.CLUSTER_START, **self.start_record)
        for attempt in range(1, PORT_ATTEMPTS + 1):
            try:
                self._wired = Wired(image, network, specs, cluster_id)
                self._create_nodes(specs)
                return
            except APIError as exc:
                busy = busy_ports(exc)
                if busy is None:
                    raise
                error = str(exc.explanation or exc)
                if attempt == PORT_ATTEMPTS:
                    raise ClusterStartError(
                        f"cluster {self.run_id}: host ports were taken before Docker bound them, "
                        f"{PORT_ATTEMPTS} times in a row; last: {error}"
                    ) from exc
            # Another process took a port between free_ports() and Docker's bind: this
            # attempt's containers go, the network stays, and new ports are picked.
            remove_run(client, self.run_id, networks=False)
            self.nodes = []
            self.history.append(
                "cluster.ports_retry", attempt=attempt, ports=ports, busy=busy, error=error
            )
            ports, specs = self._plan()

    def _quorum_record(self, specs: list[NodeSpec]) -> dict[str, object]:
        """`cluster.start`'s quorum: the initial voters and the spare controllers' ids."""
        return {
            "dynamic": True,
            "voters": [s.kafka_id for s in specs if s.is_controller],
            "spare_controllers": self.spare_controller_ids(),
        }

    def _create_nodes(self, specs: list[NodeSpec]) -> None:
        for spec in specs:
            node = self._node(spec)
            self.nodes.append(node)
            node.create()  # all nodes run before any is awaited: a KRaft quorum needs a majority

    def _wait_ready(self, deadline: float) -> None:
        """Every node logged start-up, every broker registered, and an RF=N topic takes a write."""
        try:
            for node in self.nodes:
                node.wait_started(max(1.0, deadline - time.monotonic()))
            self._admin = ClusterAdmin(self._trusted_ports)
            self.wait_registered(deadline)
            self._probe_write(deadline)
        except HarnessError as exc:
            raise ClusterStartError(
                f"cluster {self.run_id} not ready: {exc}\n{self.log_tails()}"
            ) from exc

    def wait_registered(self, deadline: float) -> None:
        """Until the cluster's metadata lists every broker (WaitTimeout names the ones seen)
        but those Kafka refused to start at a heal (harness.faults.base.refused_nodes)."""
        refused = refused_nodes(self)
        expected = sorted(n.spec.kafka_id for n in self.broker_nodes if n.name not in refused)
        wait_until(
            lambda: sorted(self.admin.registered_brokers(timeout_s=5)),
            max(0.0, deadline - time.monotonic()),
            f"brokers {expected} registered",
            done=lambda seen: seen == expected,
            retry_on=Exception,
        )

    def _probe_write(self, deadline: float) -> None:
        remaining = max(1.0, deadline - time.monotonic())
        self.admin.create_topic(READY_TOPIC, 1, self.broker_count, timeout_s=remaining)
        producer = Producer(
            {"bootstrap.servers": self.bootstrap_servers, "acks": "all", "logger": CLIENT_LOGGER}
        )
        outcome: list[KafkaError | None] = []
        producer.produce(READY_TOPIC, b"ready", on_delivery=lambda err, _msg: outcome.append(err))
        producer.flush(max(1.0, deadline - time.monotonic()))
        del producer
        if outcome != [None]:
            raise HarnessError(
                f"probe write to {READY_TOPIC} failed: {outcome or 'no delivery report'}"
            )
        self.admin.delete_topic(READY_TOPIC)

    def close(self, beside: Callable[[], None] | None = None) -> None:
        """Remove every container and the network of this run (also after a failed start).

        `beside`: work that needs none of the nodes (decoding copies of their logs), run
        while their containers are removed; the run's guard, and so its watchdog, stays until
        both have ended, and then removes whatever else the run left."""
        if self.logs_dir is not None:
            with contextlib.suppress(Exception):
                self.save_logs(self.logs_dir)
        # librdkafka clients must go while the brokers are still there: one that
        # loses its brokers during interpreter exit can abort the process.
        self._admin = None
        gc.collect()
        if beside is not None:
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="remove-nodes") as pool:
                removing = pool.submit(self._remove_nodes) if self._guard is not None else None
                beside()
                if removing is not None:
                    removing.result()
        if self._guard is not None:
            self._guard.release()
            self._guard = None
            self.history.append("cluster.removed", run_id=self.run_id)
        self.nodes = []
        self.retired = []
        self.faults.clear()

    def _remove_nodes(self) -> None:
        """The nodes' containers, removed at once (a SIGKILL, then each layer's deletion);
        errors are left for the guard's removal of the whole run, which follows."""

        def remove(node: ClusterNode) -> None:
            with contextlib.suppress(Exception):
                node.docker.remove(force=True, v=True)

        nodes = [*self.nodes, *self.retired]
        with ThreadPoolExecutor(max_workers=max(1, len(nodes))) as pool:
            list(pool.map(remove, nodes))

    # --- addresses, nodes and the admin client ----------------------------------------------------
    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"127.0.0.1:{n.spec.host_port}" for n in self.broker_nodes)

    @property
    def broker_nodes(self) -> list[ClusterNode]:
        return [n for n in self.nodes if n.spec.is_broker]

    @property
    def brokers(self) -> list[int]:
        """Ids of brokers whose container is running (not killed, stopped or paused)."""
        return [n.spec.kafka_id for n in self.broker_nodes if n.is_up()]

    def trusted_brokers(self) -> list[ClusterNode]:
        """Running brokers that no active fault touches (all running ones if every one is touched)."""
        touched = self.faults.touched()
        running = [n for n in self.broker_nodes if n.is_up()]
        return [n for n in running if n.name not in touched] or running

    def quorum_voters(self) -> list[ClusterNode]:
        """Running nodes with a KRaft controller role (none in ZooKeeper mode)."""
        return [n for n in self.nodes if n.spec.is_controller and n.is_up()]

    def _trusted_ports(self) -> list[int]:
        return [cast(int, n.spec.host_port) for n in self.trusted_brokers()]

    @property
    def admin(self) -> ClusterAdmin:
        if self._admin is None:
            raise HarnessError("the cluster is not running; use it inside 'with KafkaCluster(...)'")
        return self._admin

    def node(self, ref: NodeRef) -> ClusterNode:
        for node in self.nodes:
            if ref in (node.spec.node_id, node.name):
                return node
        known = ", ".join(str(n.spec.node_id or n.name) for n in self.nodes)
        raise ConfigError(f"no node {ref!r} in this cluster (nodes: {known})")

    def capture_segments(
        self, node: Node, reason: str, fault: Mapping[str, object], suffix: str = ""
    ) -> None:
        """NodeControl's: copy a broker's partitions aside (harness.cluster.segment_capture)."""
        if self.segment_capture is not None and node.is_broker:
            self.segment_capture.capture(self.node(node.name), reason, fault, suffix)

    def logs(self, ref: NodeRef, tail: int | None = None) -> str:
        return self.node(ref).logs(tail)

    def log_tails(self, lines: int = 25) -> str:
        parts = []
        for node in self.nodes:
            with contextlib.suppress(Exception):
                parts.append(f"--- last {lines} log lines of {node.name} ---\n{node.logs(lines)}")
        return "\n".join(parts)

    def container_names(self) -> dict[str, str]:
        """Short container id (12 hex) -> node name, for every container a node has run in
        (a replaced node's earlier ones too): the machine table names containers by it."""
        names: dict[str, str] = {}
        for node in [*self.nodes, *self.retired]:
            with contextlib.suppress(Exception):  # a node whose container was never created
                for cid in [*node.earlier_ids, str(node.docker.id)]:
                    names[cid[:12]] = node.name
        return names

    def save_logs(self, directory: Path) -> None:
        """Every node's log (`docker logs`) to `<directory>/<node id or name>.log`; a node whose
        log cannot be read or written is named in the history's broker_logs.saved event (the
        broker_logs check then counts the others as a lower bound), the others still saved."""
        directory.mkdir(parents=True, exist_ok=True)
        files: dict[str, str] = {}
        failed: dict[str, str] = {}
        for node in [*self.nodes, *self.retired]:
            name = f"{node.spec.node_id or node.name}.log"
            try:
                (directory / name).write_text(node.logs(), encoding="utf-8")
                files[node.name] = name
            except Exception as exc:  # one node's log lost must not lose the others'
                failed[node.name] = f"{type(exc).__name__}: {exc}"
        self.history.append(ev.BROKER_LOGS_SAVED, files=files, failed=failed)
