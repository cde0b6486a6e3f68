"""kill with wipe: a follower SIGKILLed and started again with empty log directories (a new
disk, same broker id) has none of its old files; it rejoins and re-replicates its partition
from the leader as a follower, in KRaft (dedicated controller) and ZooKeeper mode, and with a
size-limited log directory (emptied through its keeper)."""

from __future__ import annotations

import pytest

from harness.faults.registry import make_fault
from harness.nodes.topology import DATA_DIR
from tests.integration.conftest import ClusterFactory
from tests.integration.kafka_io import produce, read_all, wait_until

pytestmark = pytest.mark.docker

RECORDS = 2000
MARKER = f"{DATA_DIR}/t-0/wiped-if-gone"


def _sh(cluster: object, broker: int, script: str) -> str:
    code, out = cluster.node(broker).exec("sh", "-c", script)  # type: ignore[attr-defined]
    assert code == 0, f"broker {broker}: {script!r} exited {code}: {out}"
    return str(out).strip()


def _log_bytes(cluster: object, broker: int) -> int:
    return int(_sh(cluster, broker, f"cat {DATA_DIR}/t-0/*.log | wc -c"))


# ZooKeeper mode and the sized (64 MB) directories are in make test-slow (nightly): the wipe (log
# directories set aside, SIGKILL, back on empty ones, the old copy deleted) is the KRaft unsized
# case's path; ZooKeeper-mode kills are the nightly incidents' (controller-failover,
# consumer-offsets-rf1), a sized directory's own filesystem test_disk_full's.
@pytest.mark.parametrize(
    ("mode", "controllers", "size_mb"),
    [
        ("kraft", 1, None),
        pytest.param("zookeeper", 0, None, marks=pytest.mark.slow_lane),
        pytest.param("kraft", 1, 64, marks=pytest.mark.slow_lane),  # 64: its own filesystem
    ],
)
def test_wiped_follower_rejoins_empty(
    start_cluster: ClusterFactory, mode: str, controllers: int, size_mb: int | None
) -> None:
    cluster = start_cluster(mode=mode, brokers=3, controllers=controllers, log_dir_size_mb=size_mb)
    cluster.create_topic("t", partitions=1, replication_factor=3)
    sent = produce(cluster.bootstrap_servers, "t", RECORDS, "all")
    assert len(sent.acked) == RECORDS
    leader = cluster.leader("t", 0)
    assert leader is not None
    follower = next(b for b in (1, 2, 3) if b != leader)
    wait_until(
        lambda: _log_bytes(cluster, follower) == _log_bytes(cluster, leader), 60, "caught up"
    )
    full = _log_bytes(cluster, leader)
    meta_before = _sh(cluster, follower, f"grep cluster.id {DATA_DIR}/meta.properties")
    _sh(cluster, follower, f"touch {MARKER}")

    fault = make_fault("kill", cluster, follower, {"wipe": True}).inject()
    assert cluster.node(follower).status() != "running"
    fault.heal()

    # Its old files are gone (the marker no broker would delete), the same cluster and id.
    assert _sh(cluster, follower, f"test -e {MARKER} && echo kept || echo gone") == "gone"
    assert _sh(cluster, follower, f"grep cluster.id {DATA_DIR}/meta.properties") == meta_before
    heal = [e for e in cluster.history.events if e.kind == "fault.heal"][-1]
    assert heal.fields["wipe"] is True and heal.fields["disk_wiped"] is True
    assert heal.fields["wiped_partitions"] >= 1 and heal.fields["wiped_bytes"] >= full

    # It copies the partition back from the leader, as a follower, and rejoins the ISR.
    wait_until(lambda: follower in cluster.isr("t", 0), 120, f"broker {follower} back in the ISR")
    wait_until(lambda: _log_bytes(cluster, follower) == full, 60, "the log copied back in full")
    assert cluster.leader("t", 0) == leader
    log = read_all(cluster.bootstrap_servers, "t", 1, at_least=RECORDS)
    assert sorted(log) == sorted(sent.acked)
