"""What the cluster looks like: topics, leaders, ISR, the controller, group coordinators.

Mixed into KafkaCluster (harness.cluster.kafka_cluster), whose admin client answers;
the active controller of a KRaft cluster comes from the quorum itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Protocol

from harness.admin import OFFSETS_TOPIC, ClusterAdmin
from harness.errors import HarnessError
from harness.faults.control import Node
from harness.nodes.topology import DATA_DIR, INTERNAL_PORT, kafka_value
from harness.results.history import History


class Viewed(Protocol):
    """What the views need of the cluster they are mixed into."""

    @property
    def admin(self) -> ClusterAdmin: ...
    @property
    def mode(self) -> str: ...
    @property
    def kraft_controlled(self) -> bool:
        """Whether a KRaft quorum is the active controller (KRaft, or a migration from
        ZooKeeper past its metadata copy)."""

    @property
    def history(self) -> History: ...
    def trusted_brokers(self) -> Sequence[Node]: ...
    def quorum_voters(self) -> Sequence[Node]: ...


# Each KRaft voter persists its election state here before it acts on it.
QUORUM_STATE = f"{DATA_DIR}/__cluster_metadata-0/quorum-state"


class AdminViews:
    """Read through the admin client of brokers no active fault touches (trusted_brokers)."""

    def create_topic(
        self: Viewed,
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

    def leader(self: Viewed, topic: str, partition: int) -> int | None:
        leader = self.admin.partition(topic, partition).leader
        return leader if leader >= 0 else None

    def leaders(self: Viewed, topic: str) -> dict[int, int | None]:
        parts = self.admin.topic(topic).partitions
        return {p: (m.leader if m.leader >= 0 else None) for p, m in sorted(parts.items())}

    def isr(self: Viewed, topic: str, partition: int) -> list[int]:
        return sorted(self.admin.partition(topic, partition).isrs)

    def replicas(self: Viewed, topic: str, partition: int) -> list[int]:
        return list(self.admin.partition(topic, partition).replicas)

    def controller(self: Viewed) -> int:
        """The active controller: from ZooKeeper's view, or the KRaft quorum leader (also
        during a migration's dual-write, when the quorum's leader is ZooKeeper's controller)."""
        if not self.kraft_controlled:
            return self.admin.zk_controller()
        return quorum_leader(self.quorum_voters(), self.trusted_brokers())

    def coordinator(self: Viewed, group: str) -> int | None:
        """Broker leading the group's __consumer_offsets partition (None if leaderless)."""
        _ensure_offsets_topic(self.admin)
        return self.admin.coordinator(group)

    def txn_coordinator(self: Viewed, transactional_id: str) -> int | None:
        """Broker leading the transactional id's __transaction_state partition (None if
        leaderless)."""
        return self.admin.txn_coordinator(transactional_id)

    def share_coordinator(self: Viewed, group: str, topic: str, partition: int) -> int | None:
        """Broker leading the __share_group_state partition that keeps the share group's
        state of topic/partition (None if leaderless)."""
        return self.admin.share_coordinator(group, topic, partition)

    def offsets_topic_placement(self: Viewed) -> dict[int, list[int]]:
        """__consumer_offsets partition -> replicas: where the single points of failure are."""
        _ensure_offsets_topic(self.admin)
        return self.admin.offsets_topic_placement()

    def under_replicated(self: Viewed) -> list[tuple[str, int]]:
        return self.admin.under_replicated()


def quorum_leader(voters: Sequence[Node], brokers: Sequence[Node]) -> int:
    """The KRaft quorum's leader: the newest election a running voter has recorded.

    Clients are told a random broker as "controller" in KRaft; the quorum itself knows.
    Reading the voters' quorum-state files is one `cat` each; MetadataQuorumCommand starts
    a JVM, which took 19-28 s on a loaded machine, long enough for a fault planned a second
    later to land first. A voter cut off from the others may lag, so the highest epoch with
    a leader wins. The JVM tool, asked of a broker, is the fallback when no file answers.
    """
    elected: list[tuple[int, int]] = []  # (epoch, leader)
    for node in voters:
        try:
            code, out = node.exec("cat", QUORUM_STATE)
            state = json.loads(out) if code == 0 else {}
        except (OSError, ValueError):  # docker's APIError is an OSError; a torn read
            continue
        leader, epoch = state.get("leaderId"), state.get("leaderEpoch")
        if isinstance(leader, int) and isinstance(epoch, int) and leader >= 0:
            elected.append((epoch, leader))
    if elected:
        return max(elected)[1]
    for node in brokers:
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
    raise HarnessError("no running voter or broker could name the KRaft quorum's leader")


def _ensure_offsets_topic(admin: ClusterAdmin) -> None:
    if OFFSETS_TOPIC not in admin.topics():
        admin.ensure_offsets_topic()
