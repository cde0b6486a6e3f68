"""What a fault needs of the cluster it acts on: the narrow protocol faults depend on.

Faults never import the cluster class (harness.cluster) nor the container class
(harness.nodes.node): KafkaCluster and ClusterNode satisfy these protocols
structurally, and unit tests pass small fakes instead of Docker.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from harness.nodes.capabilities import AnyCapability
from harness.nodes.dynamic_quorum import QuorumStatus
from harness.results.history import History

NodeRef = int | str  # broker or controller id, or a node name such as "zookeeper"


class Node(Protocol):
    """One container of the cluster, as far as a fault acts on it."""

    @property
    def name(self) -> str: ...
    @property
    def is_broker(self) -> bool: ...
    @property
    def is_controller(self) -> bool: ...
    @property
    def node_id(self) -> int | None:
        """Kafka node id (broker or controller); None for ZooKeeper."""

    @property
    def host_port(self) -> int | None:
        """The client port published on 127.0.0.1 (brokers only)."""

    def kill(self) -> None: ...
    def stop(self) -> None: ...
    def signal(self, name: str) -> None:
        """Send its main process this signal (SIGSTOP, SIGCONT) from outside the container."""

    def start(self) -> None: ...
    def pause(self) -> None: ...
    def unpause(self) -> None: ...
    def status(self) -> str:
        """Docker's word for it: running, paused, exited, created, dead..."""

    def is_up(self) -> bool: ...
    def wait_started(self, timeout_s: float) -> None:
        """Until the node logged start-up once more; ClusterStartError if it does not."""

    def ip(self) -> str | None:
        """Address on the cluster network; None while the node is not running."""

    def exec(self, *argv: str) -> tuple[int, str]:
        """Run a command inside the node: (exit code, output)."""

    def logs(self, tail: int | None = None) -> str:
        """The container's log (all of it by default), across restarts."""

    @property
    def log_dirs(self) -> tuple[str, ...]:
        """Its log directories inside the container (a broker's; JBOD: several)."""

    @property
    def log_dir_mb(self) -> int | None:
        """Each log directory's own size (a cluster with sized log directories); None: unbounded."""

    def fill_log_dir(self, index: int) -> int:
        """Write into log directory `index` until its filesystem is full; bytes written."""

    def free_log_dir(self, index: int) -> int:
        """Delete what fill_log_dir wrote; bytes freed."""

    def partition_files(self, topic: str, partition: int) -> dict[str, bytes]:
        """name -> bytes of its partition directory's files (the node may be down)."""

    def replace_partition_file(self, topic: str, partition: int, name: str, data: bytes) -> None:
        """Write over one file of its partition directory (the node down)."""

    def clear_log_dir(self, index: int) -> tuple[int, int]:
        """Empty size-limited log directory `index` while the node is down: (bytes,
        partition directories) it held."""


class Booked(Protocol):
    """What the book needs of a fault (harness.faults.base.Fault)."""

    @property
    def kind(self) -> str: ...
    @property
    def id(self) -> int: ...
    def heal(self) -> None: ...
    def abandon(self, why: str) -> None:
        """Close it without healing: its node left the cluster for good."""

    def affected_nodes(self) -> Sequence[Node]: ...


class ActiveFaults:
    """The book of injected, not yet healed faults (a fault adds and removes itself).

    Thread-safe: the nemesis injects and heals from one thread per planned fault.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: list[Booked] = []

    def add(self, fault: Booked) -> None:
        with self._lock:
            self._faults.append(fault)

    def remove(self, fault: Booked) -> None:
        with self._lock, contextlib.suppress(ValueError):
            self._faults.remove(fault)

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def __iter__(self) -> Iterator[Booked]:
        """Oldest first, over a copy: healing while iterating is fine."""
        with self._lock:
            return iter(list(self._faults))

    def __len__(self) -> int:
        with self._lock:
            return len(self._faults)

    def touched(self) -> set[str]:
        """Names of the nodes some active fault may have made stale or unreachable."""
        return {node.name for fault in self for node in fault.affected_nodes()}


class NodeControl(Protocol):
    """The cluster as a fault acts on it: its nodes, its history, its book of faults."""

    @property
    def history(self) -> History: ...
    @property
    def mode(self) -> str:
        """kraft or zookeeper."""

    @property
    def start_timeout_s(self) -> float: ...
    def has(self, capability: AnyCapability) -> bool:
        """Whether every node is built with this capability (harness.nodes.capabilities:
        link proxies, a fake clock...)."""

    @property
    def faults(self) -> ActiveFaults: ...
    @property
    def nodes(self) -> Sequence[Node]: ...
    @property
    def broker_nodes(self) -> Sequence[Node]: ...
    def node(self, ref: NodeRef) -> Node:
        """The node with this id or name; ConfigError if there is none."""

    def capture_segments(
        self, node: Node, reason: str, fault: Mapping[str, object], suffix: str = ""
    ) -> None:
        """Copy a broker's partitions of the workload topics aside before it rejoins (reason
        `heal`) or loses its disk (`wipe`; `suffix`: where its set-aside log directories
        are): broker forensics. Never raises (a failed copy is recorded); nothing happens
        when the run asked for no copies."""


class ClusterView(Protocol):
    """What resolving a symbolic target (controller, leader-of, ...) asks of the cluster."""

    @property
    def mode(self) -> str: ...
    @property
    def brokers(self) -> list[int]:
        """Ids of the brokers whose container is running."""

    def node(self, ref: NodeRef) -> Node: ...
    def controller(self) -> int: ...
    def leader(self, topic: str, partition: int) -> int | None: ...
    def leaders(self, topic: str) -> dict[int, int | None]:
        """partition -> its leader (None: leaderless), every partition of the topic."""

    def coordinator(self, group: str) -> int | None: ...
    def txn_coordinator(self, transactional_id: str) -> int | None: ...
    def share_coordinator(self, group: str, topic: str, partition: int) -> int | None: ...


@dataclass(frozen=True)
class PartitionState:
    """One partition as the cluster's metadata describes it right now."""

    partition: int
    leader: int | None
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


class Operable(NodeControl, Protocol):
    """What cluster operations (reassign, add-broker, decommission, add-partitions, rolling
    restarts) ask of the cluster: Kafka's own admin operations, done for real."""

    def topic_names(self) -> list[str]:
        """Every topic, internal ones (__consumer_offsets) included."""

    def partition_states(self, topic: str) -> dict[int, PartitionState]:
        """partition -> leader, replicas, ISR (HarnessError if the topic is unknown)."""

    def reassign(self, topic: str, moves: Mapping[int, Sequence[int]]) -> None:
        """Start Kafka's reassignment of these partitions to these replica lists (returns at once)."""

    def reassignments_in_progress(self) -> set[tuple[str, int]]:
        """(topic, partition) of every reassignment the controller still runs."""

    def add_partitions(self, topic: str, total: int) -> None:
        """Grow the topic to `total` partitions (CreatePartitions)."""

    def wait_all_led(self, topic: str, partitions: int, timeout_s: float) -> None:
        """Until every trusted broker's metadata lists `partitions` partitions, each led."""

    def spare_ids(self) -> list[int]:
        """Broker ids declared (cluster.spare_brokers) and not started yet, lowest first."""

    def add_broker(self, broker_id: int) -> Node:
        """Start a spare broker and wait until it has registered; it is a cluster node from then on."""

    def retire(self, broker_id: int) -> None:
        """Stop a broker for good (KRaft: and unregister it); heal_all no longer brings it back."""

    def under_replicated(self) -> list[tuple[str, int]]:
        """(topic, partition) whose ISR is smaller than its replica set."""


class Upgradable(Operable, Protocol):
    """What an upgrade asks of the cluster: the software each node runs, moving one node to
    another version with its data, and the cluster's feature levels (metadata.version)."""

    @property
    def version(self) -> str:
        """The version every Kafka node runs (the one it started with while they differ)."""

    def node_versions(self) -> dict[str, str]:
        """Kafka node name -> the version it runs."""

    def replace_node(self, ref: NodeRef, version: str) -> None:
        """Stop the node, start it on `version` with its log directories, wait until it is
        back (a broker: registered)."""

    def features(self) -> dict[str, str]:
        """Feature name -> finalized level (metadata.version: '3.9-IV0')."""

    def finalize_features(self, release: str, timeout_s: float) -> dict[str, str]:
        """Raise the features to `release` ("4.3") with Kafka's tool; the levels after."""


class Migratable(Operable, Protocol):
    """What a ZooKeeper-to-KRaft migration asks of the cluster (harness.faults.migrate_to_kraft):
    the quorum it plans, the cluster id ZooKeeper holds, each roll with a phase's
    server.properties, whether the metadata copy is done, and the switch to KRaft."""

    @property
    def version(self) -> str: ...
    def migration_controller_ids(self) -> list[int]:
        """The planned controllers' ids (empty: the cluster cannot migrate)."""

    def zookeeper_cluster_id(self) -> str:
        """The cluster id ZooKeeper holds (/cluster/id)."""

    def start_migration_controllers(self, cluster_id: str) -> None:
        """Format the planned controllers with `cluster_id`, start them in migration mode and
        wait until each has started; they are cluster nodes from then on."""

    def migration_roll(self, ref: NodeRef, phase: str) -> None:
        """Stop the node, start it with its log directories and the properties of `phase`
        (broker-migrating, broker-kraft, controller-final), wait until it is back."""

    def migration_completed(self) -> bool:
        """Whether the KRaft controller has copied ZooKeeper's metadata (dual-write since)."""

    def become_kraft(self) -> None:
        """Every broker runs in KRaft mode: the cluster answers as a KRaft cluster from now on."""


class QuorumControl(Operable, Protocol):
    """What a voter change of a dynamic KRaft quorum (KIP-853) asks of the cluster
    (harness.faults.add_controller, harness.faults.remove_controller)."""

    @property
    def dynamic_quorum(self) -> bool:
        """Whether the quorum was formatted dynamic (kraft.version 1): voters can change."""

    def spare_controller_ids(self) -> list[int]:
        """Controller ids declared (cluster.spare_controllers) and not started yet, lowest first."""

    def start_spare_controller(self, node_id: int) -> Node:
        """Start a spare controller (an observer of the quorum) and wait until it has
        started; it is a cluster node from then on."""

    def quorum_status(self, timeout_s: float = 60) -> QuorumStatus:
        """The quorum as Kafka's `describe --status` gives it (HarnessError: no answer)."""

    def retire_controller(self, node_id: int, stop: bool = True) -> None:
        """A controller removed from the quorum leaves the cluster for good (stopped unless
        `stop` is False); heal_all no longer brings it back."""


class ChaosTarget(Upgradable, Migratable, QuorumControl, ClusterView, Protocol):
    """Every face at once: what the nemesis plays a schedule against."""
