"""Test 5, the seed incident at cluster level: __consumer_offsets with replication factor 1.

Kill the broker holding the group's coordinator partition: the group can no
longer commit while the topic's own partitions still have leaders. With the
factor 3 the same kill leaves commits working.
"""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka.admin import AdminClient

from tests.integration.conftest import ClusterFactory
from tests.integration.kafka_io import try_commit, wait_until

pytestmark = pytest.mark.docker


def _described_coordinator(bootstrap: str, group: str) -> int:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    description = admin.describe_consumer_groups([group], request_timeout=20)[group].result()
    return int(description.coordinator.id)


# RF 1 (about 3 min in either mode) is in the slow lane: its path is RF 3's (the same cluster,
# the coordinator's broker found by the same placement and killed), and its outcome (commits
# stop) the consumer-offsets-rf1 incident's, which the nightly runs.
@pytest.mark.parametrize(
    ("offsets_rf", "mode"),
    [
        pytest.param(1, "kraft", marks=pytest.mark.slow_lane),
        pytest.param(1, "zookeeper", marks=pytest.mark.slow_lane),
        (3, "kraft"),
        # ZooKeeper mode's coordinator found and killed the same way: the slow lane too; the
        # consumer-offsets-rf1 incident runs both modes nightly.
        pytest.param(3, "zookeeper", marks=pytest.mark.slow_lane),
    ],
)
def test_coordinator_loss(start_cluster: ClusterFactory, mode: str, offsets_rf: int) -> None:
    cluster = start_cluster(
        mode=mode, brokers=3, broker_config={"offsets.topic.replication.factor": offsets_rf}
    )
    cluster.create_topic("t", partitions=6, replication_factor=3)
    group = f"group-{uuid.uuid4().hex[:6]}"

    placement = (
        cluster.offsets_topic_placement()
    )  # creates __consumer_offsets (Kafka does it lazily)
    # Right after creation a coordinator may still be loading its partition (NOT_COORDINATOR).
    wait_until(
        lambda: try_commit(cluster.bootstrap_servers, group, "t", 1) == "ok", 90, "a first commit"
    )
    assert len(placement) == 50  # Kafka's default offsets.topic.num.partitions
    assert all(len(replicas) == offsets_rf for replicas in placement.values())
    coordinator = cluster.coordinator(group)
    assert coordinator is not None
    # Our placement arithmetic agrees with what the brokers say.
    assert coordinator == _described_coordinator(cluster.bootstrap_servers, group)

    cluster.kill(coordinator)
    # The topic itself survives: every partition gets a leader other than the dead broker.
    wait_until(
        lambda: all(cluster.leader("t", p) not in (None, coordinator) for p in range(6)),
        90,
        "a live leader for every partition of t",
    )

    if offsets_rf == 1:
        # Its only replica is dead: no leader (a broker may answer from its pre-fencing view
        # for a moment, hence the bounded wait rather than one look).
        wait_until(lambda: cluster.coordinator(group) is None, 30, "a leaderless offsets partition")
        outcomes = [
            try_commit(cluster.bootstrap_servers, group, "t", 2 + i, timeout_s=10) for i in range(3)
        ]
        assert "ok" not in outcomes, f"commits succeeded without a coordinator: {outcomes}"
    else:
        wait_until(
            lambda: cluster.coordinator(group) not in (None, coordinator), 90, "a new coordinator"
        )
        wait_until(
            lambda: try_commit(cluster.bootstrap_servers, group, "t", 7, timeout_s=10) == "ok",
            90,
            "a commit through the new coordinator",
        )

    cluster.heal_all()
    wait_until(
        lambda: try_commit(cluster.bootstrap_servers, group, "t", 9) == "ok",
        120,
        "commits after heal",
    )
