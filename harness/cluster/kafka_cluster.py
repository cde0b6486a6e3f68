"""A real multi-broker Kafka cluster in Docker, as a context manager that always cleans up."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import cast

import docker
from confluent_kafka import KafkaError, Producer
from docker.errors import APIError, DockerException
from testcontainers.core.network import Network

from harness.admin import ClusterAdmin
from harness.cluster.migration import KraftMigration
from harness.cluster.node_versions import NodeVersions
from harness.cluster.operations import ClusterOperations
from harness.cluster.segment_capture import SegmentCapture
from harness.cluster.shortcuts import FaultShortcuts
from harness.cluster.views import AdminViews
from harness.common.client_log import CLIENT_LOGGER
from harness.common.waiting import wait_until
from harness.errors import ClusterStartError, ConfigError, HarnessError
from harness.faults.control import ActiveFaults, Node
from harness.nodes import links
from harness.nodes.disks import DiskPlan
from harness.nodes.images import require_image
from harness.nodes.migration_config import plan_migration_controllers, validate_migration
from harness.nodes.node import ClusterNode, NodeLinks, NodeRef, disable_ryuk
from harness.nodes.ports import busy_ports, free_ports
from harness.nodes.reaper import RunGuard, remove_dead_runs, remove_run, run_labels
from harness.nodes.topology import (
    DEFAULT_VERSION,
    INTERNAL_PORT,
    Mode,
    NodeSpec,
    kafka_properties,
    log_dir_paths,
    new_cluster_id,
    plan_nodes,
    plan_spares,
    validate,
    with_metrics_ports,
    zookeeper_properties,
)
from harness.nodes.watchdog import start_watchdog
from harness.results import events as ev
from harness.results.history import History

READY_TOPIC = "__kafka_chaos_ready"
PORT_ATTEMPTS = 5  # picks of host ports before a start gives up on bind failures


def docker_client() -> docker.DockerClient:
    try:
        client = docker.from_env()
        client.ping()
    except DockerException as exc:
        raise HarnessError(
            f"no Docker engine answers ({exc}); run 'make setup' (it starts one on Debian as root) "
            "or start Docker yourself"
        ) from None
    return client


class KafkaCluster(AdminViews, ClusterOperations, NodeVersions, KraftMigration, FaultShortcuts):
    """Brokers (KRaft combined nodes, dedicated controllers, or ZooKeeper mode) on a private network.

    Broker settings not given keep Kafka's own defaults, so a default-config
    incident can be reproduced as it happens in production. This module is the lifecycle;
    what the cluster looks like (leader, ISR, controller...) is AdminViews, what can be
    done to it (kill, isolate, heal_all...) is FaultShortcuts. Faults act on it through
    harness.faults.control.NodeControl, never through this class.
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
        run_id: str | None = None,
        history: History | None = None,
        start_timeout_s: float = 180,
        logs_dir: Path | None = None,
        link_proxies: bool = False,
        log_dirs: int = 1,
        log_dir_size_mb: int | None = None,
        fake_clock: bool = False,
        metrics: bool = False,
        persistent_data: bool = False,
        migration_controllers: int = 0,
    ) -> None:
        config = dict(broker_config or {})
        validate(
            mode, brokers, version, controllers, config, spare_brokers, log_dirs, log_dir_size_mb
        )
        validate_migration(mode, version, migration_controllers, spare_brokers, link_proxies)
        self.mode: Mode = cast(Mode, mode)
        self.broker_count = brokers
        self.version = version
        self.broker_config = config
        self.controller_count = controllers
        self.spare_count = spare_brokers
        self.run_id = run_id or uuid.uuid4().hex[:10]
        self.history = history or History()
        self.start_timeout_s = start_timeout_s
        self.logs_dir = logs_dir
        # Every link through a Toxiproxy (harness.nodes.links): what latency, bandwidth and
        # reset faults act on. Off: the cluster is wired exactly as without them.
        self.link_proxies = link_proxies
        self._server = links.server_binary() if link_proxies else None
        # Each broker's log directories (JBOD) and, if sized, each one its own tmpfs
        # (harness.nodes.disks): what disk-full fills. Default: one, on the container's disk.
        self.log_dirs = log_dirs
        self.log_dir_size_mb = log_dir_size_mb
        # Every Kafka node's JVM under libfaketime (harness.faults.clock): what clock-skew on
        # a node acts on. Off: the nodes start exactly as without it.
        self.fake_clock = fake_clock
        # Every Kafka node's JVM with the Prometheus JMX exporter agent, its /metrics published
        # on 127.0.0.1 (metrics_targets; harness.cluster.metrics_scraper reads them).
        self.metrics = metrics
        # Every Kafka node's log directories on volumes that outlive its container
        # (harness.nodes.disks): what replace_node (an upgrade) needs. Off: on the container's
        # own disk, as before.
        self.persistent_data = persistent_data
        # KRaft controllers a ZooKeeper cluster migrates onto (harness.cluster.migration):
        # planned with the cluster, started by the migration. Whether a KRaft quorum is the
        # active controller (KRaft, or a migration past its metadata copy).
        self.migration_controller_count = migration_controllers
        self.migration_specs: list[NodeSpec] = []
        self.kraft_controlled = self.mode == "kraft"
        self.nodes: list[ClusterNode] = []
        self.retired: list[ClusterNode] = []  # decommissioned: stopped for good, logs kept
        self._spares: list[NodeSpec] = []  # planned at start, created by add_broker
        self._wiring: tuple[str, Network, list[NodeSpec], str | None] | None = None
        self.faults = ActiveFaults()  # injected and not yet healed, kept by the faults
        self._guard: RunGuard | None = None
        self._admin: ClusterAdmin | None = None
        # Broker forensics: where brokers' partitions are copied before they rejoin (set by
        # the runner; None: no copies).
        self.segment_capture: SegmentCapture | None = None

    # --- lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> KafkaCluster:
        return self.up()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def up(self) -> KafkaCluster:
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
        self.history.append("cluster.ready", run_id=self.run_id, bootstrap=self.bootstrap_servers)
        return self

    def _create(self, image: str, client: docker.DockerClient) -> None:
        """Network, then every node; on a port taken since it was picked, new ports and again."""
        network = Network(docker_network_kw={"labels": run_labels(self.run_id)})
        network.name = f"kc-{self.run_id}"
        network.create()
        ports, specs = self._plan()
        cluster_id = new_cluster_id() if self.mode == "kraft" else None
        self.history.append(
            "cluster.start",
            run_id=self.run_id,
            mode=self.mode,
            version=self.version,
            nodes=[s.name for s in specs],
            **({"link_proxies": True} if self.link_proxies else {}),
            **({"log_dirs": self.log_dirs} if self.log_dirs > 1 else {}),
            **({"log_dir_size_mb": self.log_dir_size_mb} if self.log_dir_size_mb else {}),
            **({"fake_clock": True} if self.fake_clock else {}),
            **({"persistent_data": True} if self.persistent_data else {}),
            **({"metrics_ports": self._metrics_ports(specs)} if self.metrics else {}),
            broker_config=self.broker_config,
            **({"spares": [s.name for s in self._spares]} if self._spares else {}),
            **(
                {"migration_controllers": [s.name for s in self.migration_specs]}
                if self.migration_specs
                else {}
            ),
        )
        for attempt in range(1, PORT_ATTEMPTS + 1):
            try:
                self._wiring = (image, network, specs, cluster_id)
                self._create_nodes(image, network, specs, cluster_id)
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

    def _plan(self) -> tuple[list[int], list[NodeSpec]]:
        """Host ports and nodes; the spares' ports are picked now with the others (kept aside)."""
        clients = self.broker_count + self.spare_count
        later = self.spare_count + self.migration_controller_count  # planned, started later
        kafka_nodes = self.broker_count + self.controller_count + later
        ports = free_ports(clients + (kafka_nodes if self.metrics else 0))
        self._spares = plan_spares(self.broker_count, ports[self.broker_count : clients])
        self.migration_specs = plan_migration_controllers(self.migration_controller_count)
        specs = plan_nodes(self.mode, self.broker_count, self.controller_count, ports[:clients])
        if self.metrics:  # one more port per Kafka node (spares too): its /metrics
            started = kafka_nodes - later
            specs = with_metrics_ports(specs, ports[clients : clients + started])
            rest = ports[clients + started :]
            self._spares = with_metrics_ports(self._spares, rest[: self.spare_count])
            self.migration_specs = with_metrics_ports(
                self.migration_specs, rest[self.spare_count :]
            )
        return ports, specs

    @staticmethod
    def _metrics_ports(specs: list[NodeSpec]) -> dict[str, int]:
        return {s.name: s.metrics_port for s in specs if s.metrics_port is not None}

    def metrics_targets(self) -> dict[str, int]:
        """Node name -> host port of its /metrics, for every Kafka node of the cluster now
        (empty without metrics); a node that is down answers nothing there."""
        return self._metrics_ports([n.spec for n in self.nodes])

    def _create_nodes(
        self, image: str, network: Network, specs: list[NodeSpec], cluster_id: str | None
    ) -> None:
        for spec in specs:
            node = self._node(spec, image, network, specs, cluster_id)
            self.nodes.append(node)
            node.create()  # all nodes run before any is awaited: a KRaft quorum needs a majority

    def _node(
        self,
        spec: NodeSpec,
        image: str,
        network: Network,
        specs: list[NodeSpec],
        cluster_id: str | None,
    ) -> ClusterNode:
        if spec.role == "zookeeper":  # no proxy: it opens no link; brokers' proxies reach it
            return ClusterNode(spec, image, network, self.run_id, zookeeper_properties(), None)
        node_links = None
        backend = None
        if self._server is not None:
            everyone = [*specs, *self._spares]  # a spare's name resolves through proxies too
            node_links = NodeLinks(
                proxies_json=links.proxies_json(spec, everyone, self.run_id),
                hosts=links.hosts(spec, everyone),
                server=self._server,
                entrypoint=links.ENTRYPOINT,
            )
            backend = links.CLIENT_BACKEND_PORT
        dirs = self.log_dirs if spec.is_broker else 1  # a dedicated controller: metadata only
        properties = kafka_properties(self.mode, spec, specs, self.broker_config, backend, dirs)
        disks = DiskPlan(
            log_dir_paths(dirs),
            self.log_dir_size_mb if spec.is_broker else None,
            persistent=self.persistent_data,
        )
        return ClusterNode(
            spec,
            image,
            network,
            self.run_id,
            properties,
            cluster_id,
            node_links,
            disks,
            fake_clock=self.fake_clock,
            version=self.version,
        )

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
        """Until the cluster's metadata lists every broker (WaitTimeout names the ones seen)."""
        expected = sorted(n.spec.kafka_id for n in self.broker_nodes)
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

    def close(self) -> None:
        """Remove every container and the network of this run (also after a failed start)."""
        if self.logs_dir is not None:
            with contextlib.suppress(Exception):
                self.save_logs(self.logs_dir)
        # librdkafka clients must go while the brokers are still there: one that
        # loses its brokers during interpreter exit can abort the process.
        self._admin = None
        gc.collect()
        if self._guard is not None:
            self._guard.release()
            self._guard = None
            self.history.append("cluster.removed", run_id=self.run_id)
        self.nodes = []
        self.retired = []
        self.faults.clear()

    # --- membership: spares join, decommissioned brokers leave ------------------------------
    def spare_ids(self) -> list[int]:
        """Broker ids declared as spares and not started yet, lowest first."""
        return sorted(s.kafka_id for s in self._spares)

    def add_broker(self, broker_id: int) -> ClusterNode:
        """Start a spare and wait (start_timeout_s) until the cluster's metadata lists it.

        It joins `nodes` only then, so admin requests, heal_all and wait_registered count it
        from that moment on. A spare that does not come up is stopped, kept with the
        retired (its log is saved) and is no spare any more.
        """
        spec = next((s for s in self._spares if s.kafka_id == broker_id), None)
        if spec is None:
            raise ConfigError(
                f"broker {broker_id} is no spare of this cluster (spares left: {self.spare_ids()})"
            )
        self._spares.remove(spec)
        deadline = time.monotonic() + self.start_timeout_s
        node = self._create_spare(spec)
        try:
            node.wait_started(max(1.0, deadline - time.monotonic()))
            wait_until(
                lambda: broker_id in self.admin.registered_brokers(timeout_s=5),
                max(0.0, deadline - time.monotonic()),
                f"broker {broker_id} registered",
                retry_on=Exception,
            )
        except BaseException:
            with contextlib.suppress(Exception):
                node.stop()
            self.retired.append(node)
            raise
        self.nodes.append(node)
        return node

    def _create_spare(self, spec: NodeSpec) -> ClusterNode:
        """The spare's container on the cluster network; a new host port if its own (picked
        at start) was taken since: it has never advertised the old one."""
        if self._wiring is None:
            raise HarnessError("the cluster is not running; use it inside 'with KafkaCluster(...)'")
        _image, network, specs, cluster_id = self._wiring
        image = require_image(docker_client(), self.version)  # after an upgrade: the new one
        for attempt in range(1, PORT_ATTEMPTS + 1):
            node = self._node(spec, image, network, specs, cluster_id)
            try:
                node.create()
                return node
            except APIError as exc:
                if busy_ports(exc) is None or attempt == PORT_ATTEMPTS:
                    raise
            with contextlib.suppress(DockerException):
                docker_client().containers.get(f"kc-{self.run_id}-{spec.name}").remove(force=True)
            spec = dataclasses.replace(spec, host_port=free_ports(1)[0])
            if spec.metrics_port is not None:
                spec = dataclasses.replace(spec, metrics_port=free_ports(1)[0])
        raise AssertionError("unreachable: the last attempt returns or raises")

    def retire(self, broker_id: int) -> None:
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
            self._unregister(broker_id, deadline)
        wait_until(
            lambda: broker_id not in self.admin.registered_brokers(timeout_s=5),
            max(0.0, deadline - time.monotonic()),
            f"broker {broker_id} gone from the cluster's metadata",
            retry_on=Exception,
        )

    def _unregister(self, broker_id: int, deadline: float) -> None:
        """Kafka's ClusterTool unregister, run inside a trusted broker (3.9 and 4.x alike)."""

        def attempt() -> str:
            """Empty once unregistered (or never registered); else what the tool said."""
            errors = []
            for node in self.trusted_brokers():
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
