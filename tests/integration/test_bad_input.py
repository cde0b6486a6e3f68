"""Bad input needing Docker: a missing image says how to build it; a broker that cannot start
fails with its log tail; neither leaves anything running."""

from __future__ import annotations

import docker
import pytest

from harness import ClusterStartError, ImageMissingError, KafkaCluster
from harness.nodes.reaper import RUN_LABEL

pytestmark = pytest.mark.docker


def _ours() -> list[str]:
    client = docker.from_env()
    return [c.name for c in client.containers.list(all=True, filters={"label": RUN_LABEL})]


def test_missing_image_says_how_to_build() -> None:
    before = _ours()
    with pytest.raises(ImageMissingError, match=r"make images VERSIONS=3\.8\.0"):
        KafkaCluster(mode="kraft", brokers=1, version="3.8.0").up()
    assert _ours() == before


def test_broker_that_fails_to_start_reports_its_log() -> None:
    cluster = KafkaCluster(
        mode="kraft",
        brokers=1,
        broker_config={"num.network.threads": "not-a-number"},
        start_timeout_s=90,
    )
    with pytest.raises(ClusterStartError) as info:
        cluster.up()
    message = str(info.value)
    assert "broker-1" in message
    assert "num.network.threads" in message  # Kafka's own complaint, from the log tail
    assert not any(cluster.run_id in name for name in _ours())
