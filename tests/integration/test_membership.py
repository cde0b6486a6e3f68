"""Brokers join and leave a real cluster: add-broker starts a spare, decommission moves every
replica off a broker with Kafka's reassignment and retires it, while acks=all writes go on."""

from __future__ import annotations

import pytest

from harness import DEFAULT_VERSION, KafkaCluster
from harness.faults import registry
from harness.faults.operation import Operation
from harness.nodes.images import built_versions
from tests.integration.conftest import ClusterFactory
from tests.integration.kafka_io import producing, read_all, wait_until

pytestmark = pytest.mark.docker

PARTITIONS = 6
NEWEST = max(built_versions(), key=lambda v: tuple(int(x) for x in v.split(".")))


def held_by(cluster: KafkaCluster, broker: int) -> dict[str, int]:
    """topic -> how many of its partitions have a replica on the broker (topics with none left out)."""
    held = {}
    for topic in cluster.topic_names():
        n = sum(broker in s.replicas for s in cluster.partition_states(topic).values())
        if n:
            held[topic] = n
    return held


@pytest.mark.parametrize(
    ("mode", "version"),
    # 4.x too: unregistering a retired broker is a KRaft admin call whose tool changed in 4.0.
    # All in the slow lane (nightly): the join and decommission under load are the
    # scale-out-in experiment's too (experiments/operations/, nightly on 3.9.2 and 4.3.1);
    # make test keeps the operations family in test_reassign.py and test_add_partitions.py.
    [
        pytest.param("kraft", DEFAULT_VERSION, marks=pytest.mark.slow_lane),
        pytest.param("zookeeper", DEFAULT_VERSION, marks=pytest.mark.slow_lane),
        pytest.param("kraft", NEWEST, marks=pytest.mark.slow_lane),
    ],
)
def test_a_spare_joins_then_a_broker_is_decommissioned_under_writes(
    start_cluster: ClusterFactory, mode: str, version: str
) -> None:
    cluster = start_cluster(mode=mode, brokers=3, spare_brokers=1, version=version)
    assert cluster.spare_ids() == [4] and cluster.admin.registered_brokers() == {1, 2, 3}

    # add-broker: the next spare starts, registers and is a node of the cluster from then on.
    added = registry.make_fault("add-broker", cluster, None).inject()
    assert isinstance(added, Operation)
    assert added.outcome["broker"] == 4 and added.outcome["registered"] is True
    assert cluster.spare_ids() == [] and cluster.brokers == [1, 2, 3, 4]
    assert cluster.admin.registered_brokers() == {1, 2, 3, 4}
    # New partitions go to it: 4 partitions of one replica, one per broker.
    cluster.create_topic("spread", partitions=4, replication_factor=1)
    assert sorted(cluster.leader("spread", p) or 0 for p in range(4)) == [1, 2, 3, 4]

    cluster.create_topic(
        "t", partitions=PARTITIONS, replication_factor=3, config={"min.insync.replicas": 2}
    )
    cluster.admin.ensure_offsets_topic()  # an internal topic with replicas on broker 1 too
    with producing(cluster.bootstrap_servers, "t", per_second=200) as sent:
        wait_until(lambda: len(sent.acked) >= 200, 60, "writes acknowledged before")
        on_1 = held_by(cluster, 1)
        gone = registry.make_fault("decommission", cluster, 1).inject()
        acked_at_retire = len(sent.acked)
        wait_until(lambda: len(sent.acked) >= acked_at_retire + 200, 60, "writes acked after")
    assert isinstance(gone, Operation)
    outcome = gone.outcome
    assert outcome["broker"] == 1 and outcome["retired"] is True and outcome["completed"]
    assert outcome["moved"] == on_1  # every partition it held, internal ones too
    assert outcome["voter"] is (mode == "kraft")  # combined nodes: broker 1 was a voter
    assert on_1["spread"] == 1 and on_1["__consumer_offsets"] >= 1 and on_1["t"] >= 1

    # No replica left on broker 1 (each moved one was in its new ISR before the retire).
    assert held_by(cluster, 1) == {}

    # Retired for good: unregistered, stopped, and heal_all does not bring it back.
    assert [n.name for n in cluster.retired] == ["broker-1"]
    assert cluster.admin.registered_brokers() == {2, 3, 4}
    cluster.heal_all()
    assert cluster.retired[0].status() == "exited" and cluster.brokers == [2, 3, 4]
    assert cluster.admin.registered_brokers() == {2, 3, 4}

    # acks=all while replicas moved and the broker left: nothing acknowledged is lost. (A
    # write may still time out on a loaded machine: that is availability, not a loss.)
    seen = read_all(cluster.bootstrap_servers, "t", PARTITIONS, at_least=len(sent.acked))
    lost = sorted(set(sent.acked) - set(seen))
    assert not lost, f"{len(lost)} acknowledged records lost, e.g. {lost[:5]}"
