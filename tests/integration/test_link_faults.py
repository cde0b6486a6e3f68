"""latency, bandwidth and reset against a real cluster whose links run through Toxiproxy, made
through the registry as the nemesis makes them: a client measures each one on the wire, and
after each heal no toxic is left on any proxy. A cluster without link proxies runs none."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import pytest
from confluent_kafka import Producer

from harness import KafkaCluster
from harness.faults.registry import make_fault
from harness.nodes import links, toxiproxy
from tests.integration.conftest import ClusterFactory

pytestmark = pytest.mark.docker

TOPIC = "links"
DELAY_MS = 300


def heal_event(cluster: KafkaCluster, fault_id: int) -> dict[str, Any]:
    heals = [e.fields for e in cluster.history.events if e.kind == "fault.heal"]
    return next(f for f in heals if f["fault_id"] == fault_id)


def no_toxic_left(cluster: KafkaCluster) -> bool:
    for node in cluster.nodes:
        address = node.ip()
        assert address is not None
        for proxy in links.proxies(node.spec, [n.spec for n in cluster.nodes], cluster.run_id):
            if toxiproxy.toxic_names(address, proxy.name):
                return False
    return True


def round_trips_ms(producer: Producer, count: int = 8) -> list[float]:
    """acks=all writes to partition 0, one at a time: each one's round trip."""
    out = []
    for _ in range(count):
        start = time.monotonic()
        producer.produce(TOPIC, b"x", partition=0)
        assert producer.flush(30) == 0
        out.append((time.monotonic() - start) * 1000)
    return out


def test_link_faults_act_on_the_wire_and_leave_nothing_behind(
    start_cluster: ClusterFactory,
) -> None:
    cluster = start_cluster(mode="kraft", brokers=3, link_proxies=True)
    cluster.admin.create_topic(TOPIC, 1, 3)
    leader = cluster.leader(TOPIC, 0)
    assert leader is not None
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all"})
    round_trips_ms(producer, 3)  # connections and metadata in place

    # latency on the leader's client link: every round trip to it takes at least the delay.
    before = round_trips_ms(producer)
    fault = make_fault("latency", cluster, leader, {"delay_ms": DELAY_MS, "scope": "clients"})
    fault.inject()
    during = round_trips_ms(producer)
    fault.heal()
    after = round_trips_ms(producer)
    assert min(during) >= DELAY_MS, (before, during)
    assert min(before) < DELAY_MS and min(after) < DELAY_MS, (before, during, after)
    healed = heal_event(cluster, fault.id)
    assert (healed["toxics_removed"], healed["toxics_gone"]) == (2, 0)
    assert healed["links"] == [f"broker-{leader}:clients"]
    assert no_toxic_left(cluster)

    # bandwidth: 400 kbit/s on the leader's client link; 150 KB take at least 3 s to send.
    payload = b"b" * 1500
    fault = make_fault("bandwidth", cluster, leader, {"rate_kbit": 400, "scope": "clients"})
    fault.inject()
    start = time.monotonic()
    for _ in range(100):
        producer.produce(TOPIC, payload, partition=0)
    assert producer.flush(120) == 0
    capped_s = time.monotonic() - start
    fault.heal()
    assert capped_s >= 0.8 * (100 * 1500) / (400 * 1000 / 8), capped_s
    assert no_toxic_left(cluster)

    # reset: the client's connection to the leader is reset, and it reconnects and writes.
    lines: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())  # type: ignore[method-assign]
    logger = logging.getLogger("test-link-reset")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    watched = Producer(
        {"bootstrap.servers": cluster.bootstrap_servers, "acks": "all", "logger": logger}
    )
    round_trips_ms(watched, 2)
    stop = threading.Event()

    def keep_writing() -> None:  # data through the proxy while the reset window is open
        while not stop.is_set():
            watched.produce(TOPIC, b"r", partition=0)
            watched.flush(30)

    writer = threading.Thread(target=keep_writing)
    writer.start()
    fault = make_fault("reset", cluster, leader, {"scope": "clients"})
    try:
        fault.inject()  # once: returns after its window, healed
    finally:
        stop.set()
        writer.join(60)
    watched.poll(1)
    assert any("reset by peer" in line or "Disconnected" in line for line in lines), lines
    assert round_trips_ms(watched, 2)  # reconnected: writes are acked again
    assert heal_event(cluster, fault.id)["resets"] == 1
    assert no_toxic_left(cluster)

    # heal_all heals what is still on, and its sweep clears any toxic a heal left behind.
    cluster.latency(leader, delay_ms=50, scope="all")
    stray = cluster.node(leader)
    address = stray.ip()
    assert address is not None
    toxiproxy.add_toxic(address, links.CLIENTS, "stray", "latency", "upstream", {"latency": 5})
    cluster.heal_all()
    assert not cluster.active_faults and no_toxic_left(cluster)


# The default ZooKeeper-mode cluster, shared (the plugin's pool): it only looks.
@pytest.mark.kafka_cluster(mode="zookeeper", shared=True)
def test_a_cluster_without_link_faults_runs_no_proxy(kafka_cluster: KafkaCluster) -> None:
    cluster = kafka_cluster
    node = cluster.node(1)
    code, out = node.exec("sh", "-c", "ps -eo comm | grep -c toxiproxy || true")
    assert code == 0 and out.strip() == "0", out
    assert "127.0.1." not in node.exec("cat", "/etc/hosts")[1]
