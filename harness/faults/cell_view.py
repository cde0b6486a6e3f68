"""What a kind's rules may know of the rest of its matrix cell: `CellView`, built by harness.spec.

A module of its own so that the rules (harness.faults.kind, harness.faults.target_rules) read
it without importing each other; a kind takes it from harness.faults.kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

DEFAULT_OFFSETS_RF = 3  # Kafka's offsets.topic.replication.factor


@dataclass(frozen=True)
class CellView:
    """What a kind's rules may know of the rest of its matrix cell (built by harness.spec)."""

    mode: str
    brokers: tuple[int, ...]  # broker ids, 1..n
    spares: tuple[int, ...]  # declared spare broker ids (started by add-broker)
    controllers: tuple[int, ...]  # dedicated KRaft controller ids (above CONTROLLER_ID_BASE)
    topic: str  # the workload's topic
    partitions: int  # its partitions when the cell starts
    grown_partitions: int  # the most it can have during the cell (add-partitions grows it)
    replication_factor: int
    broker_config: Mapping[str, str | int | float | bool]  # the cluster's settings
    default_group: str | None  # the group plain `coordinator-of` names
    transactional_ids: tuple[str, ...]  # the producer's, each pipeline member's
    member_counts: Mapping[str, int] = field(default_factory=dict)  # per consumer set
    has_pipeline: bool = False
    log_dirs: int = 1  # each broker's log directories (cluster.log_dirs)
    version: str = ""  # the Kafka version the cluster starts on (cluster.version)
    # KRaft controllers a ZooKeeper cluster may migrate onto (cluster.migration_controllers)
    migration_controllers: tuple[int, ...] = ()
    producer_client: str = "librdkafka"  # the producer's client library (producer.client)
    share_groups: tuple[str, ...] = ()  # the share consumer sets' groups
    # A dynamic controller quorum (cluster.dynamic_quorum, KIP-853) and its declared spare
    # controllers (started by add-controller; ids after the controllers').
    dynamic_quorum: bool = False
    spare_controllers: tuple[int, ...] = ()
    planned: tuple[tuple[float, str], ...] = ()  # (at_s, kind) of every fault of the cell

    @property
    def offsets_rf(self) -> int:
        """offsets.topic.replication.factor of the cluster (Kafka's default 3)."""
        return int(self.broker_config.get("offsets.topic.replication.factor", DEFAULT_OFFSETS_RF))

    @property
    def reachable(self) -> list[int]:
        """Brokers a replica can be put on during the cell: the running ones and the spares."""
        return [*self.brokers, *self.spares]
