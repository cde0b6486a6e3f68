"""Test 1: a 3-broker cluster is ready, takes 1,000 acks=all records and gives them all back."""

from __future__ import annotations

import pytest

from harness import KafkaCluster
from tests.integration.conftest import MODES, ClusterFactory
from tests.integration.kafka_io import produce, read_all

pytestmark = pytest.mark.docker


def _roundtrip(cluster: KafkaCluster, topic: str = "t") -> None:
    cluster.create_topic(topic, partitions=3, replication_factor=3)
    assert sorted(cluster.brokers) == [1, 2, 3]
    assert all(cluster.isr(topic, p) == [1, 2, 3] for p in range(3))
    sent = produce(cluster.bootstrap_servers, topic, 1000, acks="all")
    assert sent.failed == {}
    assert len(sent.acked) == 1000
    log = read_all(cluster.bootstrap_servers, topic, 3)
    assert sorted(log) == list(range(1000))
    assert all(len(offsets) == 1 for offsets in log.values())


# The default cluster of each mode, shared with the other tests that leave it as they found it
# (the plugin's pool): a topic of its own.
@pytest.mark.parametrize(
    "mode", [pytest.param(m, marks=pytest.mark.kafka_cluster(mode=m, shared=True)) for m in MODES]
)
def test_three_brokers_roundtrip(kafka_cluster: KafkaCluster, mode: str) -> None:
    assert kafka_cluster.mode == mode
    _roundtrip(kafka_cluster, "roundtrip")


def test_kafka4_kraft_roundtrip(start_cluster: ClusterFactory) -> None:
    from harness.nodes.images import built_versions

    newest = max(built_versions(), key=lambda v: tuple(int(x) for x in v.split(".")))
    assert newest.startswith("4.")
    _roundtrip(start_cluster(mode="kraft", brokers=3, version=newest))


def test_dedicated_controllers(start_cluster: ClusterFactory) -> None:
    cluster = start_cluster(mode="kraft", brokers=3, controllers=3)
    assert cluster.controller() in (101, 102, 103)
    _roundtrip(cluster)
