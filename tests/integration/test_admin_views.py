"""A metadata view is the asked broker's own, not whichever broker librdkafka picked."""

from __future__ import annotations

from typing import cast

import pytest

from harness import KafkaCluster
from harness.admin import ClusterAdmin

# The default KRaft cluster, shared (the plugin's pool): a topic of its own.
pytestmark = [pytest.mark.docker, pytest.mark.kafka_cluster(mode="kraft", shared=True)]

TOPIC = "admin-views"


def test_metadata_at_answers_from_the_broker_at_that_port(kafka_cluster: KafkaCluster) -> None:
    cluster = kafka_cluster
    cluster.create_topic(TOPIC, partitions=2, replication_factor=3)
    ids = {cast(int, n.spec.host_port): n.spec.kafka_id for n in cluster.broker_nodes}
    answered = [(port, ClusterAdmin.metadata_at(port, TOPIC)) for _ in range(10) for port in ids]
    # -1 is the bootstrap connection itself: the same broker, before its id was learnt.
    assert all(meta.orig_broker_id in (ids[port], -1) for port, meta in answered)
    assert all(len(meta.topics[TOPIC].partitions) == 2 for _, meta in answered)
