"""Test 2: hard-kill the leader of partition 0 mid-write; a replica from the ISR takes over,
every acknowledged record stays readable, and the killed broker rejoins the ISR."""

from __future__ import annotations

import threading

import pytest

from tests.integration.conftest import MODES_ZOOKEEPER_SLOW, ClusterFactory
from tests.integration.kafka_io import ProduceResult, produce, read_all, wait_until

pytestmark = pytest.mark.docker


# ZooKeeper mode is in make test-slow (nightly): the kill acts on the container as in KRaft
# mode; ZooKeeper-mode kills are the nightly's controller-failover and consumer-offsets-rf1.
@pytest.mark.parametrize("mode", MODES_ZOOKEEPER_SLOW)
def test_kill_leader_while_producing(start_cluster: ClusterFactory, mode: str) -> None:
    cluster = start_cluster(mode=mode, brokers=3)
    cluster.create_topic("t", partitions=3, replication_factor=3, config={"min.insync.replicas": 2})
    old_leader = cluster.leader("t", 0)
    isr_before = cluster.isr("t", 0)
    assert old_leader is not None and isr_before == [1, 2, 3]

    sent = ProduceResult()
    writer = threading.Thread(
        target=produce,
        args=(cluster.bootstrap_servers, "t", 3000, "all"),
        kwargs={"per_second": 200, "result": sent},
    )
    writer.start()
    wait_until(lambda: len(sent.acked) >= 300, 60, "300 acknowledged records before the kill")
    fault = cluster.kill(old_leader)

    new_leader = wait_until(
        lambda: (lambda leader: leader if leader not in (None, old_leader) else None)(
            cluster.leader("t", 0)
        ),
        90,
        f"a new leader for t/0 other than {old_leader}",
    )
    assert new_leader in isr_before
    writer.join(timeout=180)
    assert not writer.is_alive()
    assert len(sent.acked) + len(sent.failed) == 3000

    log = read_all(cluster.bootstrap_servers, "t", 3)
    missing = sorted(set(sent.acked) - set(log))
    assert missing == [], f"{len(missing)} acknowledged records are not in the log: {missing[:10]}"

    fault.heal()  # restart the killed broker with its data
    wait_until(
        lambda: old_leader in cluster.isr("t", 0),
        120,
        f"broker {old_leader} back in the ISR of t/0",
    )
    kinds = [e.kind for e in cluster.history.events]
    assert "fault.inject" in kinds and "fault.heal" in kinds
