"""Cluster planning and per-node properties (pure logic, no Docker)."""

from __future__ import annotations

import pytest

from harness import ConfigError, KafkaCluster
from harness.nodes.topology import (
    kafka_properties,
    new_cluster_id,
    plan_nodes,
    plan_spares,
    validate,
)


def props(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines())


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mode": "raft"}, "mode must be 'kraft' or 'zookeeper'"),
        ({"brokers": 0}, "brokers must be an integer from 1 to 5"),
        ({"brokers": 6}, "brokers must be an integer from 1 to 5"),
        ({"mode": "zookeeper", "version": "4.3.1"}, "has no ZooKeeper mode"),
        ({"mode": "zookeeper", "controllers": 3}, "dedicated controllers exist only"),
        ({"broker_config": {"listeners": "PLAINTEXT://:9092"}}, "harness manages these"),
        ({"version": "latest"}, "not of the form X.Y.Z"),
    ],
)
def test_bad_cluster_input_is_named(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        KafkaCluster(**kwargs)  # type: ignore[arg-type]


def test_kraft_combined_nodes_are_all_voters() -> None:
    nodes = plan_nodes("kraft", 3, 0, [41001, 41002, 41003])
    assert [n.name for n in nodes] == ["broker-1", "broker-2", "broker-3"]
    p = props(kafka_properties("kraft", nodes[1], nodes, {"min.insync.replicas": 2}))
    assert p["process.roles"] == "broker,controller"
    assert p["node.id"] == "2"
    assert p["controller.quorum.voters"] == "1@broker-1:9093,2@broker-2:9093,3@broker-3:9093"
    assert p["advertised.listeners"] == "INTERNAL://broker-2:9092,EXTERNAL://127.0.0.1:41002"
    assert p["listeners"] == "INTERNAL://:9092,EXTERNAL://:41002,CONTROLLER://:9093"
    assert p["min.insync.replicas"] == "2"


def test_kraft_dedicated_controllers() -> None:
    nodes = plan_nodes("kraft", 2, 3, [41001, 41002])
    assert [n.name for n in nodes] == [
        "controller-101",
        "controller-102",
        "controller-103",
        "broker-1",
        "broker-2",
    ]
    controller = props(kafka_properties("kraft", nodes[0], nodes, {}))
    assert controller["process.roles"] == "controller"
    assert controller["listeners"] == "CONTROLLER://:9093"
    assert "advertised.listeners" not in controller
    broker = props(kafka_properties("kraft", nodes[3], nodes, {}))
    assert broker["process.roles"] == "broker"
    assert broker["controller.quorum.voters"].startswith("101@controller-101:9093,")


def test_zookeeper_mode_keeps_kafka_defaults() -> None:
    nodes = plan_nodes("zookeeper", 3, 0, [1, 2, 3])
    assert nodes[0].name == "zookeeper" and nodes[0].node_id is None
    p = props(
        kafka_properties("zookeeper", nodes[1], nodes, {"unclean.leader.election.enable": True})
    )
    assert p["broker.id"] == "1"
    assert p["zookeeper.connect"] == "zookeeper:2181"
    assert "process.roles" not in p and "CONTROLLER" not in p["listener.security.protocol.map"]
    assert p["unclean.leader.election.enable"] == "true"  # booleans in Kafka's spelling
    assert "offsets.topic.replication.factor" not in p  # Kafka's default applies


def test_cluster_id_is_kafka_uuid_text() -> None:
    ids = [new_cluster_id() for _ in range(2000)]  # ~1 in 64 raw ids starts with '-'
    assert all(len(cid) == 22 and "=" not in cid for cid in ids)
    assert not any(cid.startswith("-") for cid in ids)


def test_validate_accepts_the_supported_range() -> None:
    for brokers in range(1, 6):
        validate("kraft", brokers, "3.9.2", 0, {})
        validate("zookeeper", brokers, "3.9.2", 0, {})


def test_spares_are_brokers_after_the_others_and_no_voters() -> None:
    nodes = plan_nodes("kraft", 3, 0, [41001, 41002, 41003])
    spares = plan_spares(3, [41004, 41005])
    assert [(s.name, s.node_id, s.role, s.host_port) for s in spares] == [
        ("broker-4", 4, "broker", 41004),
        ("broker-5", 5, "broker", 41005),
    ]
    p = props(kafka_properties("kraft", spares[0], nodes, {"min.insync.replicas": 2}))
    assert p["process.roles"] == "broker"  # a static quorum cannot grow: it joins as a broker
    assert p["node.id"] == "4"
    assert p["controller.quorum.voters"] == "1@broker-1:9093,2@broker-2:9093,3@broker-3:9093"
    assert p["listeners"] == "INTERNAL://:9092,EXTERNAL://:41004"
    assert p["advertised.listeners"] == "INTERNAL://broker-4:9092,EXTERNAL://127.0.0.1:41004"
    assert p["min.insync.replicas"] == "2"


def test_a_zookeeper_spare_is_a_broker_like_the_others() -> None:
    nodes = plan_nodes("zookeeper", 2, 0, [41001, 41002])
    spare = plan_spares(2, [41003])[0]
    p = props(kafka_properties("zookeeper", spare, nodes, {}))
    assert p["broker.id"] == "3" and p["zookeeper.connect"] == "zookeeper:2181"
    assert p["listeners"] == "INTERNAL://:9092,EXTERNAL://:41003"


@pytest.mark.parametrize(
    ("brokers", "spares", "message"),
    [
        (4, 2, r"brokers \+ spare_brokers must be at most 5 \(got 4 \+ 2\)"),
        (3, -1, "spare_brokers must be an integer >= 0"),
    ],
)
def test_spares_count_against_the_broker_limit(brokers: int, spares: int, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        KafkaCluster(brokers=brokers, spare_brokers=spares)
    validate("kraft", 3, "3.9.2", 0, {}, spares=2)  # 5 in all: fine
