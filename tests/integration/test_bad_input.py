"""Bad input needing Docker: a missing image says how to build it (a cluster, and `run` of a
single experiment before anything starts); a broker that cannot start fails with its log
tail; none leaves anything running."""

from __future__ import annotations

from pathlib import Path

import docker
import pytest

from harness import ClusterStartError, ImageMissingError, KafkaCluster
from harness.nodes.reaper import RUN_LABEL
from tests.experiments.cli import harness

pytestmark = pytest.mark.docker


def _ours() -> list[str]:
    client = docker.from_env()
    return [c.name for c in client.containers.list(all=True, filters={"label": RUN_LABEL})]


def test_missing_image_says_how_to_build() -> None:
    before = _ours()
    with pytest.raises(ImageMissingError, match=r"make images VERSIONS=3\.8\.0"):
        KafkaCluster(mode="kraft", brokers=1, version="3.8.0").up()
    assert _ours() == before


def test_a_run_upgrading_to_an_unbuilt_image_refuses_before_anything_starts(
    tmp_path: Path,
) -> None:
    """Docker's image list is read, no container started: exit 3 naming the command."""
    spec = tmp_path / "upgrade.yaml"
    spec.write_text(
        "name: unbuilt-upgrade\ncluster: {version: 3.9.2}\nproducer: {records: 10}\n"
        "faults: [{at_s: 1, kind: upgrade, to_version: 4.3.99}]\n"  # no such Kafka release
    )
    before = _ours()
    done = harness("run", spec, "--out", tmp_path / "results")
    assert done.returncode == 3, done.stderr
    assert "kafka-chaos/kafka:4.3.99" in done.stderr
    assert 'make images VERSIONS="4.3.99"' in done.stderr
    assert not (tmp_path / "results").exists()
    assert set(_ours()) <= set(before)  # nothing new (another run's may come and go)


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
