"""A team's own integration test with the kafka-chaos pytest plugin (docs/pytest-plugin.md).

"Our service writes orders with acks=all to a topic with min.insync.replicas=2. If the
partition's leader dies mid-write, no order we were told is stored may be lost."
The cluster is real (three brokers in Docker); the fault is a real SIGKILL of the leader's JVM.
"""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, Message, Producer, TopicPartition

from harness import KafkaCluster
from harness.pytest_plugin.chaos import Chaos

TOPIC = "orders"
ORDERS = 600  # 300 before the kill, 300 while the leader is dead

pytestmark = [
    pytest.mark.docker,  # needs Docker and the broker images: make test's integration lane
    pytest.mark.kafka_cluster(mode="kraft", brokers=3),
]


class OrderWriter:
    """Stands for the service: every order is sent once; we keep where Kafka stored it."""

    def __init__(self, bootstrap: str) -> None:
        self.producer = Producer(
            {"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True}
        )
        self.acked: dict[str, tuple[int, int]] = {}  # order id -> (partition, offset)
        self.failed: dict[str, str] = {}

    def write(self, order_id: str) -> None:
        def report(err: KafkaError | None, msg: Message) -> None:
            if err is None:
                self.acked[order_id] = (msg.partition(), msg.offset())
            else:
                self.failed[order_id] = str(err)

        self.producer.produce(TOPIC, value=order_id.encode(), callback=report)
        self.producer.poll(0)

    def flush(self) -> None:
        assert self.producer.flush(120) == 0, "orders still unacknowledged after 120 s"


def read_back(bootstrap: str) -> dict[str, tuple[int, int]]:
    """Every order in the topic, from offset 0 to the end: order id -> (partition, offset)."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"read-back-{uuid.uuid4().hex[:6]}",
            "enable.auto.commit": False,
        }
    )
    low, high = consumer.get_watermark_offsets(TopicPartition(TOPIC, 0), timeout=30)
    consumer.assign([TopicPartition(TOPIC, 0, low)])
    seen: dict[str, tuple[int, int]] = {}
    deadline = time.monotonic() + 60
    while (not seen or max(o for _, o in seen.values()) < high - 1) and time.monotonic() < deadline:
        msg = consumer.poll(1.0)
        if msg is not None and msg.error() is None:
            seen[msg.value().decode()] = (msg.partition(), msg.offset())
    consumer.close()
    return seen


def test_acked_orders_survive_a_leader_kill(kafka_cluster: KafkaCluster, chaos: Chaos) -> None:
    kafka_cluster.create_topic(
        TOPIC, partitions=1, replication_factor=3, config={"min.insync.replicas": 2}
    )
    leader_before = kafka_cluster.leader(TOPIC, 0)
    writer = OrderWriter(kafka_cluster.bootstrap_servers)
    for i in range(ORDERS // 2):
        writer.write(f"order-{i}")
    writer.flush()

    with chaos.fault({"kind": "kill", "target": f"leader-of:{TOPIC}/0"}) as kill:
        assert kill.resolved == leader_before  # the fault hit the partition's leader
        for i in range(ORDERS // 2, ORDERS):
            writer.write(f"order-{i}")
        writer.flush()
        leader_during = kafka_cluster.leader(TOPIC, 0)
        assert leader_during not in (None, leader_before)  # a surviving replica took over
    assert kill.injected_at is not None and kill.healed_at is not None
    assert kill.injected_at < kill.healed_at and not kill.active

    # acks=all with two replicas left in the ISR: every order was acknowledged...
    assert writer.failed == {}
    assert len(writer.acked) == ORDERS
    # ...and every acknowledged order is in the log, at the offset it was acknowledged at.
    stored = read_back(kafka_cluster.bootstrap_servers)
    missing = sorted(set(writer.acked) - set(stored))
    assert missing == [], f"{len(missing)} acknowledged orders lost: {missing[:5]}"
    assert {o: stored[o] for o in writer.acked} == writer.acked
    assert sorted(off for _, off in stored.values()) == list(range(ORDERS))  # no duplicates
