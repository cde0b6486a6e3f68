"""Integration tests start real clusters (Docker + the locally built broker images)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from harness import DEFAULT_VERSION, KafkaCluster

MODES = ["kraft", "zookeeper"]
# Both modes, ZooKeeper's in the slow lane (make test-slow, nightly): for a fault that acts on
# the container or its links the same way in either mode.
MODES_ZOOKEEPER_SLOW = ["kraft", pytest.param("zookeeper", marks=pytest.mark.slow_lane)]


ClusterFactory = Callable[..., KafkaCluster]


@pytest.fixture
def start_cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ClusterFactory]:
    """Start clusters that are always removed; broker logs land in the test's tmp dir."""
    started: list[KafkaCluster] = []

    def start(**kwargs: Any) -> KafkaCluster:
        kwargs.setdefault("version", DEFAULT_VERSION)
        cluster = KafkaCluster(logs_dir=tmp_path / f"logs-{len(started)}", **kwargs)
        started.append(cluster)
        return cluster.up()

    yield start
    for cluster in started:
        cluster.close()
