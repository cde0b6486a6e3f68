"""Defect 5: a host port taken between `free_ports()` and Docker's bind does not fail the start.

The race is made certain: a socket listens on a port, and the cluster's first pick of
ports is that port. The cluster must drop that attempt, pick again under the same run
id, record it, and work.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from harness.cluster import wiring
from harness.nodes.ports import free_ports
from tests.integration.conftest import ClusterFactory
from tests.integration.kafka_io import produce, read_all

pytestmark = pytest.mark.docker


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port some other process is listening on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def test_taken_port_is_picked_again(
    start_cluster: ClusterFactory, taken_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    picks: list[list[int]] = []

    def first_pick_taken(count: int) -> list[int]:
        ports = free_ports(count)
        if not picks:
            ports[-1] = taken_port
        picks.append(ports)
        return ports

    monkeypatch.setattr(wiring, "free_ports", first_pick_taken)
    cluster = start_cluster(mode="kraft", brokers=2)

    assert len(picks) == 2 and taken_port not in picks[1]
    assert f"127.0.0.1:{taken_port}" not in cluster.bootstrap_servers
    retries = [e.fields for e in cluster.history.events if e.kind == "cluster.ports_retry"]
    assert len(retries) == 1
    assert retries[0]["ports"] == picks[0] and retries[0]["busy"] == [taken_port]
    kinds = [e.kind for e in cluster.history.events]
    assert kinds.count("cluster.start") == 1 and kinds[-1] == "cluster.ready"

    cluster.create_topic("t", partitions=1, replication_factor=2)
    sent = produce(cluster.bootstrap_servers, "t", 50)
    assert len(sent.acked) == 50 and not sent.failed
    assert sorted(read_all(cluster.bootstrap_servers, "t", 1, at_least=50)) == list(range(50))
