"""power-loss on real brokers on plfs (one cluster, KRaft, RF 3, min.insync.replicas 2):
one broker's power cut loses nothing acks=all promised (the others hold the records); then
the whole site's loses acknowledged records Kafka never fsynced, and none of a topic that
fsyncs every record (`flush.messages=1`). Every broker comes back each time, and Kafka's
own recovery is in the heal."""

from __future__ import annotations

import contextlib
import time

import pytest
from docker.errors import APIError

from harness.cluster import docker_client
from harness.faults.registry import make_fault
from harness.nodes.capabilities.power_loss_fs import CONTROL, PLFS_DIR, STATE_DIR
from harness.nodes.reaper import RUN_LABEL, remove_run
from tests.integration.conftest import ClusterFactory
from tests.integration.kafka_io import produce, read_all

pytestmark = pytest.mark.docker

RECORDS = 2000
CHECKPOINT_S = 6  # replica.high.watermark.checkpoint.interval.ms (5 s), and a second
SAFE = {"min.insync.replicas": "2"}


def _cut(cluster: object, target: object) -> dict[str, object]:
    fault = make_fault("power-loss", cluster, target, {"duration_s": 5})  # type: ignore[arg-type]
    fault.inject()
    fault.heal()
    heal = [e for e in cluster.history.events if e.kind == "fault.heal"][-1]  # type: ignore[attr-defined]
    return dict(heal.fields)


def test_one_broker_keeps_what_acks_all_promised_and_a_whole_site_does_not(
    start_cluster: ClusterFactory,
) -> None:
    cluster = start_cluster(mode="kraft", brokers=3, power_loss_fs=True)
    cluster.create_topic("one", partitions=1, replication_factor=3, config=SAFE)
    cluster.create_topic("site", partitions=1, replication_factor=3, config=SAFE)
    cluster.create_topic("synced", 1, 3, config={**SAFE, "flush.messages": "1"})

    # One broker, the leader: the other two replicas hold every acknowledged record.
    sent = produce(cluster.bootstrap_servers, "one", RECORDS, "all")
    assert len(sent.acked) == RECORDS
    leader = cluster.leader("one", 0)
    assert leader is not None
    heal = _cut(cluster, leader)
    name = cluster.node(leader).name
    assert heal["came_back"] == {name: True}
    assert heal["discarded"][name]["bytes"] > 0  # type: ignore[index]
    assert sorted(read_all(cluster.bootstrap_servers, "one", 1, at_least=RECORDS)) == sorted(
        sent.acked
    )

    # The whole site: every copy's unsynced writes at once.
    lost = produce(cluster.bootstrap_servers, "site", RECORDS, "all")
    synced = produce(cluster.bootstrap_servers, "synced", RECORDS, "all")
    assert len(lost.acked) == RECORDS and len(synced.acked) == RECORDS
    # Kafka makes a new partition directory durable when it next fsyncs the log directory
    # (its checkpoints, every 5 s): a topic younger than that loses its directory with the site.
    time.sleep(CHECKPOINT_S)
    heal = _cut(cluster, "all")
    assert heal["came_back"] == {n.name: True for n in cluster.nodes if n.is_broker}
    dropped = heal["discarded"]
    assert isinstance(dropped, dict) and all(d["bytes"] > 0 for d in dropped.values())
    assert any(any(s.startswith("site-0/") for s in d["segments"]) for d in dropped.values())
    kept = read_all(cluster.bootstrap_servers, "site", 1, at_least=0)
    assert len(kept) < RECORDS, heal  # acknowledged by three replicas, and gone
    kept_synced = read_all(cluster.bootstrap_servers, "synced", 1, timeout_s=90, at_least=0)
    assert sorted(kept_synced) == sorted(synced.acked), heal


# Slow lane (nightly): the reaper's FUSE abort is tests/unit's on hand-built /proc and fusectl
# trees; the power cut itself is the test above's.
@pytest.mark.slow_lane
def test_a_broker_held_by_a_frozen_plfs_is_still_removed(start_cluster: ClusterFactory) -> None:
    """A runner that dies mid-cut leaves plfs frozen (cut without --exit): the dying JVM's
    last writes to the mount wait on it for ever, and Docker alone cannot remove the
    container. The reaper aborts the container's FUSE connections and removes it."""
    cluster = start_cluster(mode="kraft", brokers=1, power_loss_fs=True)
    cluster.create_topic("frozen", partitions=1, replication_factor=1)
    # Enough appends to leave dirty pages (the indexes) that the JVM's exit must write back.
    assert len(produce(cluster.bootstrap_servers, "frozen", 20_000, "all").acked) == 20_000
    (node,) = cluster.nodes
    argv = [f"{PLFS_DIR}/plfs", "ctl", "--control", CONTROL, "cut", "--fault-id", "frozen"]
    code, out = node.exec(*argv, "--report", f"{STATE_DIR}/report-frozen.json")
    assert code == 0, out
    # Measured: Docker's kill fails ("did not receive an exit event") and the container
    # stays running, held by the frozen daemon.
    with contextlib.suppress(APIError):
        node.kill()
    node.docker.reload()
    assert node.docker.status == "running", "not held: this test would show nothing"
    client = docker_client()
    removed = remove_run(client, cluster.run_id)
    assert node.name in " ".join(removed), removed
    left = client.containers.list(all=True, filters={"label": f"{RUN_LABEL}={cluster.run_id}"})
    assert left == []
