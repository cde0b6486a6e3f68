"""split, lossy, cut-quorum and cut-zookeeper against real clusters, made through the registry as
the nemesis makes them; after each heal no iptables chain is left in any node. The split and
the ZooKeeper cut are then made again on the same cluster through the cluster's own shortcuts
(`PartitionFault.split`, `PartitionFault.from_zookeeper`): one cluster for both ways."""

from __future__ import annotations

import random
from typing import Any

import pytest
from confluent_kafka import Producer

from harness import KafkaCluster, PartitionFault, Target
from harness.faults import iptables
from harness.faults.registry import make_fault
from harness.nodes.topology import DATA_DIR, INTERNAL_PORT
from tests.integration.conftest import ClusterFactory
from tests.integration.kafka_io import produce, read_all, wait_until

pytestmark = pytest.mark.docker

MIN_ISR = {"min.insync.replicas": 2}


def assert_no_chain_left(cluster: KafkaCluster) -> None:
    for node in cluster.nodes:
        code, rules = node.exec("iptables", "-w", "-S")
        assert code == 0 and iptables.CHAIN_PREFIX not in rules, f"{node.name}: {rules}"


def heal_event(cluster: KafkaCluster, fault_id: int) -> dict[str, Any]:
    heals = [e.fields for e in cluster.history.events if e.kind == "fault.heal"]
    return next(f for f in heals if f["fault_id"] == fault_id)


def bootstrap_without(cluster: KafkaCluster, broker: int) -> str:
    """The other brokers only: a broker cut from the controllers, ZooKeeper or a split's
    majority gets no metadata any more and may still name itself leader; a client steered
    there sends acks=all writes that time out (measured: cut-zookeeper, 3.9.2, 100 of 100
    and 50 of 50 writes timed out with every broker in the bootstrap, after leadership had
    moved; with the other brokers only, all were acked)."""
    return ",".join(
        f"127.0.0.1:{n.host_port}" for n in cluster.broker_nodes if n is not cluster.node(broker)
    )


def probe_acked(bootstrap: str, topic: str) -> bool:
    """One acks=all record "-2" from a new client: acked within 10 s?"""
    acked: list[bool] = []
    producer = Producer(
        {"bootstrap.servers": bootstrap, "acks": "all", "message.timeout.ms": 10000}
    )
    producer.produce(topic, b"-2", on_delivery=lambda err, _msg: acked.append(err is None))
    producer.flush(15)
    return acked == [True]


def produce_from_inside(cluster: KafkaCluster, broker: int, topic: str) -> str:
    """acks=all writes by a Java producer running in the broker's own container: behind a
    split it reaches its own side only. Values are "-1" (never a seq of ours). Idempotence
    off: an idempotent producer waits for ever for a producer id, which the broker must get
    from the controller on the other side (measured, 3.9.2)."""
    node = cluster.node(broker)
    node.exec("sh", "-c", "printf -- '-1' > /tmp/payload")
    _code, out = node.exec(
        "timeout", "120", "java", "-Xmx128m", "-cp", "/opt/kafka/libs/*",
        "org.apache.kafka.tools.ProducerPerformance",
        "--topic", topic, "--num-records", "3", "--throughput", "-1",
        "--payload-file", "/tmp/payload",
        "--producer-props", f"bootstrap.servers={node.name}:{INTERNAL_PORT}", "acks=all",
        "request.timeout.ms=5000", "delivery.timeout.ms=10000", "max.block.ms=10000",
        "enable.idempotence=false",
    )  # fmt: skip
    return out


# make test-slow (nightly): a split's iptables rules are the isolation's and the cut's
# (test_partition.py, test_fault_kinds.py's cut, make test); the minority leader refusing
# acks=all writes is the split-brain experiment's (experiments/operations/, nightly).
@pytest.mark.slow_lane
def test_split_minority_leader_stops_taking_acks_all_writes(start_cluster: ClusterFactory) -> None:
    cluster = start_cluster(mode="kraft", brokers=3, broker_config=MIN_ISR)
    cluster.create_topic("t", partitions=1, replication_factor=3)
    leader = cluster.leader("t", 0)
    assert leader is not None
    fault = make_fault("split", cluster, leader, {"side": "minority"}).inject()
    others = [f"broker-{b}" for b in (1, 2, 3) if b != leader]
    assert fault.describe()["sides"] == [[f"broker-{leader}"], others]

    # The old leader still believes it leads, but no follower reaches it: nothing is acked.
    out = produce_from_inside(cluster, leader, "t")
    assert "0 records sent" in out and "TimeoutException" in out, out
    # The majority elects a new leader and takes acks=all writes (from clients that ask it:
    # see bootstrap_without).
    wait_until(lambda: cluster.leader("t", 0) not in (None, leader), 90, "a majority-side leader")
    # The first acks=all write the new leader confirms (bounded): seen in 2 of 6 runs
    # (2026-11-24) a leader elected on the majority side took none for over 60 s after the
    # election, so 200 records sent at once all timed out. Probes are "-2", never a seq.
    majority = bootstrap_without(cluster, leader)
    wait_until(lambda: probe_acked(majority, "t"), 120, "an acks=all write the majority acks")
    during = produce(majority, "t", 200, acks="all")
    assert len(during.acked) == 200, during.failed

    fault.heal()
    assert_no_chain_left(cluster)
    wait_until(lambda: cluster.isr("t", 0) == [1, 2, 3], 90, "the full ISR after heal")
    after = produce(cluster.bootstrap_servers, "t", 50, acks="all")
    assert len(after.acked) == 50
    seen = read_all(cluster.bootstrap_servers, "t", 1, at_least=250)
    assert -1 not in seen, "a write only the minority leader took survived the heal"
    assert -2 in seen  # the probe the majority acked
    # both runs sent seq 0, 1...
    copies = {seq: len(offsets) for seq, offsets in seen.items() if seq != -2}
    assert copies == {seq: 2 if seq < 50 else 1 for seq in range(200)}, "acked records lost"
    assert fault.describe()["shape"] == "split"

    # The shortcut, healed by heal_all, on a topic of its own: leadership leaves the minority,
    # and the healed cluster takes acks=all writes.
    cluster.create_topic("u", partitions=1, replication_factor=3)
    leader = cluster.leader("u", 0)
    assert leader is not None
    PartitionFault.split(cluster, [leader]).inject()
    wait_until(
        lambda: cluster.leader("u", 0) not in (None, leader), 90, "leadership to leave the minority"
    )
    cluster.heal_all()
    wait_until(lambda: cluster.isr("u", 0) == [1, 2, 3], 90, "the full ISR after heal")
    sent = produce(
        cluster.bootstrap_servers, "u", 20, acks="all"
    )  # the healed cluster takes writes
    assert len(sent.acked) == 20
    assert set(read_all(cluster.bootstrap_servers, "u", 1, at_least=20)) == set(range(20))


def test_lossy_drops_packets_and_clients_still_get_through(start_cluster: ClusterFactory) -> None:
    cluster = start_cluster(mode="kraft", brokers=3)
    cluster.create_topic("t", partitions=1, replication_factor=3)
    leader = cluster.leader("t", 0)
    assert leader is not None
    fault = make_fault("lossy", cluster, leader, {"loss": 0.3}).inject()
    chain = iptables.chain_for(fault.id)

    sent = produce(cluster.bootstrap_servers, "t", 100, acks="all")
    assert len(sent.acked) == 100, sent.failed
    assert set(read_all(cluster.bootstrap_servers, "t", 1, at_least=100)) == set(range(100))
    counts = iptables.packet_counts(cluster.node(leader), chain)
    assert counts is not None and sum(n for n, target in counts if target == "DROP") > 0

    fault.heal()
    assert_no_chain_left(cluster)
    healed = heal_event(cluster, fault.id)
    assert healed["loss"] == 0.3 and healed["scope"] == "all"
    assert 0 < healed["dropped_packets"] < healed["matched_packets"]


def _log_bytes(cluster: KafkaCluster, broker: int, topic: str, partition: int) -> int:
    _code, out = cluster.node(broker).exec(
        "sh", "-c", f"cat {DATA_DIR}/{topic}-{partition}/*.log | wc -c"
    )
    return int(out.strip())


def test_cut_quorum_fences_the_broker_while_replication_goes_on(
    start_cluster: ClusterFactory,
) -> None:
    """Measured (3.9.2, combined mode): the cut node is fenced (broker.session.timeout.ms),
    leadership leaves it and it drops out of every ISR; the rest keep taking acks=all writes
    with min.insync.replicas=2. It gets no metadata any more (that comes from the quorum) but,
    still fetching on the replication listener, keeps copying the partitions it followed.
    Heal: unfenced, back in every ISR."""
    cluster = start_cluster(mode="kraft", brokers=3, broker_config=MIN_ISR)
    cluster.create_topic("t", partitions=3, replication_factor=3)
    target = cluster.leader("t", 0)
    assert target is not None
    fault = make_fault("cut-quorum", cluster, target).inject()
    assert fault.describe()["port"] == 9093

    wait_until(lambda: target not in cluster.admin.registered_brokers(), 90, f"{target} fenced")
    wait_until(
        lambda: all(target not in cluster.isr("t", p) for p in range(3)),
        90,
        f"{target} out of every ISR",
    )
    assert cluster.leader("t", 0) != target
    followed = [p for p in range(3) if p != 0]  # led by the others (one leader each)
    before = {p: _log_bytes(cluster, target, "t", p) for p in followed}
    sent = produce(bootstrap_without(cluster, target), "t", 300, acks="all")
    assert len(sent.acked) == 300, sent.failed
    wait_until(
        lambda: all(_log_bytes(cluster, target, "t", p) > before[p] for p in followed),
        60,
        f"{target}'s copies of t/1 and t/2 growing while it is fenced",
    )

    fault.heal()
    assert_no_chain_left(cluster)
    wait_until(lambda: target in cluster.admin.registered_brokers(), 90, f"{target} unfenced")
    wait_until(lambda: not cluster.under_replicated(), 90, "every ISR full again")


def test_cut_zookeeper_expires_the_session_and_moves_leadership(
    start_cluster: ClusterFactory,
) -> None:
    """The broker's ZooKeeper session expires (zookeeper.session.timeout.ms, 18 s): the
    controller takes it for dead, moves its leadership and drops it from the ISR although it
    still reaches the other brokers, and stops telling it anything (see bootstrap_without).
    Heal: it registers again and catches up."""
    cluster = start_cluster(mode="zookeeper", brokers=3, broker_config=MIN_ISR)
    cluster.create_topic("t", partitions=1, replication_factor=3)
    target = cluster.leader("t", 0)
    assert target is not None
    fault = make_fault("cut-zookeeper", cluster, target).inject()
    assert fault.describe()["sides"] == [[f"broker-{target}"], ["zookeeper"]]

    wait_until(
        lambda: target not in cluster.admin.registered_brokers(), 90, f"{target} unregistered"
    )
    wait_until(lambda: cluster.leader("t", 0) not in (None, target), 90, "leadership to move")
    wait_until(lambda: target not in cluster.isr("t", 0), 90, f"{target} out of the ISR")
    sent = produce(bootstrap_without(cluster, target), "t", 100, acks="all")
    assert len(sent.acked) == 100, sent.failed

    fault.heal()
    assert_no_chain_left(cluster)
    wait_until(lambda: target in cluster.admin.registered_brokers(), 90, f"{target} registered")
    wait_until(lambda: cluster.isr("t", 0) == [1, 2, 3], 90, "the full ISR after heal")
    assert set(read_all(cluster.bootstrap_servers, "t", 1, at_least=100)) == set(range(100))

    # The shortcut, on a broker picked at random: zookeeper.session.timeout.ms (18 s) later its
    # ephemeral registration is gone; healed, it registers again.
    victim = Target.parse("random").resolve(cluster, random.Random(7))
    fault = PartitionFault.from_zookeeper(cluster, victim).inject()
    wait_until(
        lambda: victim not in cluster.admin.registered_brokers(), 90, f"{victim} unregistered"
    )
    fault.heal()
    wait_until(
        lambda: victim in cluster.admin.registered_brokers(), 90, f"{victim} registered again"
    )
