"""A metadata view is the asked broker's own, not whichever broker librdkafka picked."""

from __future__ import annotations

from typing import cast

import pytest

from harness.admin import ClusterAdmin
from tests.integration.conftest import ClusterFactory

pytestmark = pytest.mark.docker


def test_metadata_at_answers_from_the_broker_at_that_port(start_cluster: ClusterFactory) -> None:
    cluster = start_cluster(mode="kraft", brokers=3)
    cluster.create_topic("chaos", partitions=2, replication_factor=3)
    ids = {cast(int, n.spec.host_port): n.spec.kafka_id for n in cluster.broker_nodes}
    answered = [(port, ClusterAdmin.metadata_at(port, "chaos")) for _ in range(10) for port in ids]
    # -1 is the bootstrap connection itself: the same broker, before its id was learnt.
    assert all(meta.orig_broker_id in (ids[port], -1) for port, meta in answered)
    assert all(len(meta.topics["chaos"].partitions) == 2 for _, meta in answered)
