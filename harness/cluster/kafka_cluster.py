"""A real multi-broker Kafka cluster in Docker, as a context manager that always cleans up."""

from __future__ import annotations

import contextlib
import gc
import re
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, cast

import docker
from confluent_kafka import KafkaError, Producer
from docker.errors import DockerException
from testcontainers.core.network import Network

from harness.admin import OFFSETS_TOPIC, ClusterAdmin
from harness.common.client_log import CLIENT_LOGGER
from harness.errors import ClusterStartError, ConfigError, HarnessError
from harness.faults import iptables
from harness.faults.clients import ClientCutFault
from harness.faults.kill import KillFault
from harness.faults.partition import PartitionFault
from harness.faults.pause import PauseFault
from harness.faults.restart import RestartFault
from harness.faults.stop import StopFault
from harness.nodes.images import require_image
from harness.nodes.node import ClusterNode, NodeRef
from harness.nodes.ports import free_ports
from harness.nodes.reaper import RunGuard, disable_ryuk, remove_dead_runs, run_labels
from harness.nodes.topology import (
    DEFAULT_VERSION,
    INTERNAL_PORT,
    Mode,
    kafka_properties,
    kafka_value,
    new_cluster_id,
    plan_nodes,
    validate,
    zookeeper_properties,
)
from harness.results.history import History

if TYPE_CHECKING:
    from harness.faults.base import Fault

READY_TOPIC = "__kafka_chaos_ready"


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


class KafkaCluster:
    """Brokers (KRaft combined nodes, dedicated controllers, or ZooKeeper mode) on a private network.

    Broker settings not given keep Kafka's own defaults, so a default-config
    incident can be reproduced as it happens in production.
    """

    def __init__(
        self,
        mode: str = "kraft",
        brokers: int = 3,
        version: str = DEFAULT_VERSION,
        broker_config: Mapping[str, object] | None = None,
        *,
        controllers: int = 0,
        run_id: str | None = None,
        history: History | None = None,
        start_timeout_s: float = 180,
        logs_dir: Path | None = None,
    ) -> None:
        config = dict(broker_config or {})
        validate(mode, brokers, version, controllers, config)
        self.mode = cast(Mode, mode)
        self.broker_count = brokers
        self.version = version
        self.broker_config = config
        self.controller_count = controllers
        self.run_id = run_id or uuid.uuid4().hex[:10]
        self.history = history or History()
        self.start_timeout_s = start_timeout_s
        self.logs_dir = logs_dir
        self.nodes: list[ClusterNode] = []
        self._faults: list[Fault] = []
        self._guard: RunGuard | None = None
        self._admin: ClusterAdmin | None = None

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
        self._guard = RunGuard(client, self.run_id).__enter__()
        try:
            self._create(image)
            self._wait_ready(time.monotonic() + self.start_timeout_s)
        except BaseException:
            self.close()
            raise
        self.history.append("cluster.ready", run_id=self.run_id, bootstrap=self.bootstrap_servers)
        return self

    def _create(self, image: str) -> None:
        network = Network(docker_network_kw={"labels": run_labels(self.run_id)})
        network.name = f"kc-{self.run_id}"
        network.create()
        specs = plan_nodes(
            self.mode, self.broker_count, self.controller_count, free_ports(self.broker_count)
        )
        cluster_id = new_cluster_id() if self.mode == "kraft" else None
        self.history.append(
            "cluster.start",
            run_id=self.run_id,
            mode=self.mode,
            version=self.version,
            nodes=[s.name for s in specs],
            broker_config=self.broker_config,
        )
        for spec in specs:
            if spec.role == "zookeeper":
                properties = zookeeper_properties()
            else:
                properties = kafka_properties(self.mode, spec, specs, self.broker_config)
            node = ClusterNode(spec, image, network, self.run_id, properties, cluster_id)
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
        expected = {n.spec.kafka_id for n in self.broker_nodes}
        seen: set[int] = set()
        while time.monotonic() < deadline:
            with contextlib.suppress(Exception):
                seen = self.admin.registered_brokers(timeout_s=5)
                if seen == expected:
                    return
            time.sleep(0.5)
        raise HarnessError(f"brokers registered: {sorted(seen)}, expected {sorted(expected)}")

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
        self._faults = []

    # --- addresses and nodes -----------------------------------------------------------------
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

    def _trusted_brokers(self) -> list[ClusterNode]:
        """Running brokers that no active fault touches (all running ones if every one is touched)."""
        touched = {node.name for fault in self._faults for node in fault.affected_nodes()}
        running = [n for n in self.broker_nodes if n.is_up()]
        return [n for n in running if n.name not in touched] or running

    def _trusted_ports(self) -> list[int]:
        return [cast(int, n.spec.host_port) for n in self._trusted_brokers()]

    def node(self, ref: NodeRef) -> ClusterNode:
        for node in self.nodes:
            if ref in (node.spec.node_id, node.name):
                return node
        known = ", ".join(str(n.spec.node_id or n.name) for n in self.nodes)
        raise ConfigError(f"no node {ref!r} in this cluster (nodes: {known})")

    def logs(self, ref: NodeRef, tail: int | None = None) -> str:
        return self.node(ref).logs(tail)

    def log_tails(self, lines: int = 25) -> str:
        parts = []
        for node in self.nodes:
            with contextlib.suppress(Exception):
                parts.append(f"--- last {lines} log lines of {node.name} ---\n{node.logs(lines)}")
        return "\n".join(parts)

    def save_logs(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        for node in self.nodes:
            (directory / f"{node.spec.node_id or node.name}.log").write_text(
                node.logs(), encoding="utf-8"
            )

    # --- admin views -------------------------------------------------------------------------
    @property
    def admin(self) -> ClusterAdmin:
        if self._admin is None:
            raise HarnessError("the cluster is not running; use it inside 'with KafkaCluster(...)'")
        return self._admin

    def create_topic(
        self,
        name: str,
        partitions: int = 1,
        replication_factor: int = 1,
        config: Mapping[str, object] | None = None,
    ) -> None:
        settings = {k: kafka_value(v) for k, v in (config or {}).items()}
        self.admin.create_topic(name, partitions, replication_factor, settings)
        self.history.append(
            "topic.create",
            topic=name,
            partitions=partitions,
            replication_factor=replication_factor,
            config=settings,
        )

    def leader(self, topic: str, partition: int) -> int | None:
        leader = self.admin.partition(topic, partition).leader
        return leader if leader >= 0 else None

    def isr(self, topic: str, partition: int) -> list[int]:
        return sorted(self.admin.partition(topic, partition).isrs)

    def replicas(self, topic: str, partition: int) -> list[int]:
        return list(self.admin.partition(topic, partition).replicas)

    def controller(self) -> int:
        """The active controller: from ZooKeeper's view, or the KRaft quorum leader."""
        if self.mode == "zookeeper":
            return self.admin.zk_controller()
        return self._quorum_leader()

    def _quorum_leader(self) -> int:
        # Clients are told a random broker in KRaft; the quorum itself knows its leader.
        for node in self._trusted_brokers():
            code, out = node.exec(
                "java",
                "-Xmx128m",
                "-cp",
                "/opt/kafka/libs/*",
                "org.apache.kafka.tools.MetadataQuorumCommand",
                "--bootstrap-server",
                f"{node.name}:{INTERNAL_PORT}",
                "describe",
                "--status",
            )
            match = re.search(r"LeaderId:\s*(\d+)", out)
            if code == 0 and match:
                return int(match.group(1))
        raise HarnessError("no running broker could describe the KRaft quorum")

    def coordinator(self, group: str) -> int | None:
        """Broker leading the group's __consumer_offsets partition (None if leaderless)."""
        self._ensure_offsets_topic()
        return self.admin.coordinator(group)

    def offsets_topic_placement(self) -> dict[int, list[int]]:
        """__consumer_offsets partition -> replicas: where the single points of failure are."""
        self._ensure_offsets_topic()
        return self.admin.offsets_topic_placement()

    def _ensure_offsets_topic(self) -> None:
        if OFFSETS_TOPIC not in self.admin.topics():
            self.admin.ensure_offsets_topic()

    def under_replicated(self) -> list[tuple[str, int]]:
        return self.admin.under_replicated()

    # --- faults ------------------------------------------------------------------------------
    def register_fault(self, fault: Fault) -> None:
        self._faults.append(fault)

    def unregister_fault(self, fault: Fault) -> None:
        with contextlib.suppress(ValueError):
            self._faults.remove(fault)

    @property
    def active_faults(self) -> list[Fault]:
        return list(self._faults)

    def kill(self, ref: NodeRef) -> Fault:
        return KillFault(self, ref).inject()

    def stop(self, ref: NodeRef) -> Fault:
        return StopFault(self, ref).inject()

    def restart(self, ref: NodeRef, hard: bool = False) -> Fault:
        return RestartFault(self, ref, hard=hard).inject()

    def pause(self, ref: NodeRef) -> Fault:
        return PauseFault(self, ref).inject()

    def isolate(self, ref: NodeRef) -> Fault:
        return PartitionFault.isolate(self, ref).inject()

    def cut_clients(self, ref: NodeRef) -> Fault:
        return ClientCutFault(self, ref).inject()

    def start(self, ref: NodeRef) -> None:
        """Bring back a killed or stopped node (healing its fault) and wait until it has started."""
        node = self.node(ref)
        self._heal_faults_of(node, (KillFault, StopFault))
        if node.status() != "running":
            node.start()
            node.wait_started(self.start_timeout_s)

    def unpause(self, ref: NodeRef) -> None:
        node = self.node(ref)
        self._heal_faults_of(node, (PauseFault,))
        if node.status() == "paused":
            node.unpause()

    def _heal_faults_of(self, node: ClusterNode, kinds: tuple[type[Fault], ...]) -> None:
        for fault in reversed(self._faults):
            if isinstance(fault, kinds) and node in fault.affected_nodes():
                fault.heal()

    def heal_all(self) -> None:
        """Undo every fault, then sweep: nothing paused, stopped or partitioned remains."""
        errors: list[str] = []
        for fault in reversed(self._faults):
            try:
                fault.heal()
            except Exception as exc:  # keep healing the rest
                errors.append(f"{fault.kind} #{fault.id}: {exc}")
        restarted = []
        for node in self.nodes:
            status = node.status()
            if status == "paused":
                node.unpause()
            elif status in ("exited", "created", "dead"):
                node.start()
                restarted.append(node)
            iptables.remove_all(node)
        deadline = time.monotonic() + self.start_timeout_s
        for node in restarted:
            node.wait_started(max(1.0, deadline - time.monotonic()))
        self.wait_registered(deadline)
        self.history.append("cluster.healed", errors=errors)
        if errors:
            raise HarnessError(
                "heal_all restored the cluster, but some heals failed: " + "; ".join(errors)
            )
