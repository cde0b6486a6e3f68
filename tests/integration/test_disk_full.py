"""Disks of their own: a JBOD broker (two size-limited log directories) places partitions on
both; disk-full on its second directory under acks=all writes gives real ENOSPC, Kafka takes
that directory offline and moves its partitions' leadership, the heal frees it and restarts
the broker, and every acknowledged record is still there."""

from __future__ import annotations

import pytest

from harness.faults.disk_full import DiskFullFault
from harness.faults.registry import make_fault
from harness.nodes.topology import DATA_DIR, log_dir_paths
from tests.integration.conftest import ClusterFactory
from tests.integration.kafka_io import producing, read_all, wait_until

pytestmark = pytest.mark.docker

PARTITIONS = 6
SECOND = f"{DATA_DIR}-1"


def _partitions_in(cluster: object, broker: int, path: str) -> set[str]:
    node = cluster.node(broker)  # type: ignore[attr-defined]
    code, out = node.exec("sh", "-c", f"ls {path}")
    assert code == 0, out
    return {name for name in out.split() if name.startswith("t-")}


def test_jbod_disk_full_takes_one_directory_offline_and_the_heal_brings_it_back(
    start_cluster: ClusterFactory,
) -> None:
    cluster = start_cluster(mode="kraft", brokers=3, log_dirs=2, log_dir_size_mb=32)
    cluster.create_topic("t", partitions=PARTITIONS, replication_factor=3)
    # Each broker holds a replica of every partition, spread over both of its directories.
    for broker in (1, 2, 3):
        first, second = (_partitions_in(cluster, broker, p) for p in log_dir_paths(2))
        assert first and second and len(first | second) == PARTITIONS, (broker, first, second)
    target = 2
    on_second = _partitions_in(cluster, target, SECOND)
    size = cluster.node(target).disk_usage()
    assert [total for _, total in size] == [32 * 1024 * 1024] * 2

    with producing(cluster.bootstrap_servers, "t", per_second=200) as sent:
        wait_until(lambda: len(sent.acked) >= 200, 60, "writes under way")
        fault = make_fault("disk-full", cluster, target, {"log_dir": 1}).inject()
        assert isinstance(fault, DiskFullFault)
        # Kafka notices on its next write there: the directory goes offline, the broker runs.
        wait_until(
            lambda: f"Stopping serving logs in dir {SECOND}" in cluster.node(target).logs(),
            90,
            f"broker {target} takes {SECOND} offline",
        )
        assert cluster.node(target).is_up()
        # No partition of the full directory is led by it any more; the others may be.
        wait_until(
            lambda: all(
                cluster.leader("t", int(name.split("-")[-1])) != target for name in on_second
            ),
            60,
            "leadership moved off the full directory",
        )
        fault.heal()
        acked_before_stop = len(sent.acked)
    heal = [e for e in cluster.history.events if e.kind == "fault.heal"][-1].fields
    assert heal["offline_dirs"] == [SECOND] and heal["broker_stopped"] is False
    assert heal["restarted"] is True and heal["storage_errors"] >= 1
    assert heal["filled_mb"] > 0 and heal["freed_mb"] == heal["filled_mb"]
    assert heal["log_dirs"] == [SECOND]
    # Back with both directories; every partition fully replicated; nothing acked is lost.
    wait_until(lambda: not cluster.under_replicated(), 120, "every partition's ISR full again")
    assert _partitions_in(cluster, target, SECOND) == on_second
    assert acked_before_stop > 200
    log = read_all(cluster.bootstrap_servers, "t", PARTITIONS, at_least=len(sent.acked))
    assert set(sent.acked) <= set(log)
