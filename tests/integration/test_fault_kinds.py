"""The remaining fault kinds and targets, each against a real cluster. (The minority split and
the ZooKeeper cut through these shortcuts run in test_network_faults.py, on the cluster of
the same fault made through the registry; a ZooKeeper broker killed and started at once, in
test_upgrade.py, with the upgrade step that meets the same old registration.)"""

from __future__ import annotations

import random

import pytest
from confluent_kafka import Producer

from harness import PartitionFault, Target
from tests.integration.conftest import MODES_ZOOKEEPER_SLOW, ClusterFactory
from tests.integration.kafka_io import produce, wait_until

pytestmark = pytest.mark.docker


def test_stop_start_and_restart(start_cluster: ClusterFactory) -> None:
    cluster = start_cluster(mode="kraft", brokers=3)
    cluster.create_topic("t", partitions=3, replication_factor=3)

    cluster.stop(2)  # graceful: controlled shutdown moves leadership away at once
    assert cluster.brokers == [1, 3]
    wait_until(lambda: 2 not in cluster.admin.registered_brokers(), 60, "broker 2 unregistered")
    assert all(cluster.leader("t", p) in (1, 3) for p in range(3))
    cluster.start(2)
    assert cluster.brokers == [1, 2, 3] and cluster.active_faults == []
    wait_until(lambda: cluster.isr("t", 0) == [1, 2, 3], 90, "broker 2 back in the ISR")

    starts = cluster.node(3).starts
    cluster.restart(3, hard=True)
    assert cluster.node(3).starts == starts + 1 and 3 in cluster.brokers
    kinds = [e.kind for e in cluster.history.events if e.kind.startswith("fault.")]
    assert kinds == ["fault.inject", "fault.heal"] * 2


def test_cut_clients_only(start_cluster: ClusterFactory) -> None:
    cluster = start_cluster(mode="kraft", brokers=3)
    cluster.create_topic("t", partitions=1, replication_factor=3)
    leader = cluster.leader("t", 0)
    assert leader is not None
    port = cluster.node(leader).spec.host_port

    fault = cluster.cut_clients(leader)
    errors: list[object] = []
    producer = Producer({"bootstrap.servers": f"127.0.0.1:{port}", "message.timeout.ms": 5000})
    producer.produce("t", b"x", on_delivery=lambda err, _m: errors.append(err))
    producer.flush(15)
    assert errors and errors[0] is not None, "a client reached the cut-off broker"
    # Replication is untouched: the broker stays leader with a full ISR.
    assert cluster.leader("t", 0) == leader and cluster.isr("t", 0) == [1, 2, 3]

    fault.heal()
    assert len(produce(cluster.bootstrap_servers, "t", 10).acked) == 10


# ZooKeeper mode in make test-slow (nightly): the kill acts on the container as in KRaft mode;
# the ZooKeeper controller's failover is the controller-failover incident's (nightly, both modes).
@pytest.mark.parametrize("mode", MODES_ZOOKEEPER_SLOW)
def test_kill_the_controller(start_cluster: ClusterFactory, mode: str) -> None:
    cluster = start_cluster(mode=mode, brokers=3)
    controller = Target.parse("controller").resolve(cluster, random.Random(1))
    assert controller in (1, 2, 3)
    cluster.kill(controller)
    wait_until(
        lambda: cluster.controller() not in (controller,),
        90,
        f"a controller other than {controller}",
    )
    cluster.create_topic("after", partitions=1, replication_factor=2)  # the new controller works
    cluster.heal_all()
    assert sorted(cluster.brokers) == [1, 2, 3]


# Slow lane (nightly): test_network_faults' cut-quorum fences a broker the same way (through the
# registry, combined nodes); this one cuts it from dedicated controllers through the shortcut.
@pytest.mark.slow_lane
def test_broker_cut_from_controller_quorum_is_fenced(start_cluster: ClusterFactory) -> None:
    cluster = start_cluster(mode="kraft", brokers=3, controllers=3)
    cluster.create_topic("t", partitions=1, replication_factor=3)
    leader = cluster.leader("t", 0)
    assert leader is not None
    fault = PartitionFault.from_controllers(cluster, leader).inject()
    # No heartbeats for broker.session.timeout.ms (9 s): the controller fences it, and
    # its leadership moves although the brokers can still reach one another.
    wait_until(lambda: leader not in cluster.admin.registered_brokers(), 90, f"{leader} fenced")
    wait_until(lambda: cluster.leader("t", 0) not in (None, leader), 90, "leadership to move")
    fault.heal()
    wait_until(lambda: leader in cluster.admin.registered_brokers(), 90, f"{leader} unfenced")
