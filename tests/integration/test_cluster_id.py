"""A KRaft cluster id may start with '-' (ZooKeeper makes such ids, and a migration formats
its controllers with ZooKeeper's): the node's storage is formatted with it all the same."""

from __future__ import annotations

import pytest

from harness.cluster import kafka_cluster
from tests.integration.conftest import ClusterFactory

pytestmark = pytest.mark.docker

DASHED = "-iIpfSrzSxi3AoT-uxvLcg"  # the id ZooKeeper gave a migration run that then failed


def test_a_cluster_id_starting_with_a_dash_formats_and_starts(
    start_cluster: ClusterFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kafka_cluster, "new_cluster_id", lambda: DASHED)
    cluster = start_cluster(mode="kraft", brokers=1)
    code, out = cluster.node(1).exec("cat", "/var/lib/kafka/data/meta.properties")
    assert code == 0 and f"cluster.id={DASHED}" in out, out
    cluster.create_topic("t", partitions=1, replication_factor=1)
    assert cluster.leader("t", 0) == 1
