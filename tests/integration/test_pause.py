"""Test 3: a paused broker drops out of the ISR; unpaused, it returns."""

from __future__ import annotations

import pytest

from tests.integration.conftest import MODES_ZOOKEEPER_SLOW, ClusterFactory
from tests.integration.kafka_io import produce, wait_until

pytestmark = pytest.mark.docker

# Kafka's default replica.lag.time.max.ms is 30 s; 10 s keeps the test short
# without changing what is tested (a frozen follower is removed from the ISR).
FAST_ISR = {"replica.lag.time.max.ms": 10000}


# ZooKeeper mode is in make test-slow (nightly): a pause is docker pause in either mode (the ISR
# shrink is the partition leader's, not the controller's doing); KRaft mode keeps the path.
@pytest.mark.parametrize("mode", MODES_ZOOKEEPER_SLOW)
def test_pause_drops_follower_from_isr(start_cluster: ClusterFactory, mode: str) -> None:
    cluster = start_cluster(mode=mode, brokers=3, broker_config=FAST_ISR)
    cluster.create_topic("t", partitions=1, replication_factor=3)
    leader = cluster.leader("t", 0)
    follower = next(b for b in cluster.replicas("t", 0) if b != leader)

    fault = cluster.pause(follower)
    assert follower not in cluster.brokers  # paused is not live
    produce(cluster.bootstrap_servers, "t", 50, acks="1")  # give the leader something to replicate
    wait_until(
        lambda: follower not in cluster.isr("t", 0), 90, f"paused broker {follower} out of the ISR"
    )

    fault.heal()
    assert follower in cluster.brokers
    wait_until(lambda: cluster.isr("t", 0) == [1, 2, 3], 90, f"broker {follower} back in the ISR")
