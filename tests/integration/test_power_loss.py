"""power-loss on real brokers on plfs: acks=all with min.insync.replicas 2 survives one
broker's power cut (the others hold the records), and loses acknowledged records when the
whole site loses power (Kafka never fsynced them) unless the topic fsyncs every record
(`flush.messages=1`). The cluster comes back and Kafka's own recovery is in the heal."""

from __future__ import annotations

import time

import pytest

from harness.faults.registry import make_fault
from tests.integration.conftest import ClusterFactory
from tests.integration.kafka_io import produce, read_all

pytestmark = pytest.mark.docker

RECORDS = 2000
CHECKPOINT_S = 6  # replica.high.watermark.checkpoint.interval.ms (5 s), and a second


def _cut(cluster: object, target: object) -> dict[str, object]:
    fault = make_fault("power-loss", cluster, target, {"duration_s": 5})  # type: ignore[arg-type]
    fault.inject()
    fault.heal()
    heal = [e for e in cluster.history.events if e.kind == "fault.heal"][-1]  # type: ignore[attr-defined]
    return dict(heal.fields)


def test_a_whole_site_losing_power_loses_what_kafka_never_fsynced(
    start_cluster: ClusterFactory,
) -> None:
    cluster = start_cluster(mode="kraft", brokers=3, power_loss_fs=True)
    cluster.create_topic(
        "t", partitions=1, replication_factor=3, config={"min.insync.replicas": "2"}
    )
    cluster.create_topic(
        "synced",
        partitions=1,
        replication_factor=3,
        config={"min.insync.replicas": "2", "flush.messages": "1"},
    )
    sent = produce(cluster.bootstrap_servers, "t", RECORDS, "all")
    synced = produce(cluster.bootstrap_servers, "synced", RECORDS, "all")
    assert len(sent.acked) == RECORDS and len(synced.acked) == RECORDS
    # Kafka makes a new partition directory durable when it next fsyncs the log directory
    # (its checkpoints, every 5 s): a topic younger than that loses its directory with the site.
    time.sleep(CHECKPOINT_S)

    heal = _cut(cluster, "all")

    assert heal["came_back"] == {n.name: True for n in cluster.nodes if n.is_broker}
    dropped = heal["discarded"]
    assert isinstance(dropped, dict) and all(d["bytes"] > 0 for d in dropped.values())
    assert any(any(s.startswith("t-0/") for s in d["segments"]) for d in dropped.values())
    kept = read_all(cluster.bootstrap_servers, "t", 1, at_least=0)
    assert len(set(kept)) < RECORDS  # acknowledged by three replicas, and gone
    kept_synced = read_all(cluster.bootstrap_servers, "synced", 1, timeout_s=90, at_least=0)
    assert sorted(kept_synced) == sorted(synced.acked), heal


def test_one_broker_losing_power_loses_nothing_acks_all_promised(
    start_cluster: ClusterFactory,
) -> None:
    cluster = start_cluster(mode="kraft", brokers=3, power_loss_fs=True)
    cluster.create_topic(
        "t", partitions=1, replication_factor=3, config={"min.insync.replicas": "2"}
    )
    sent = produce(cluster.bootstrap_servers, "t", RECORDS, "all")
    leader = cluster.leader("t", 0)
    assert leader is not None

    heal = _cut(cluster, leader)

    assert heal["came_back"] == {cluster.node(leader).name: True}
    assert heal["discarded"][cluster.node(leader).name]["bytes"] > 0  # type: ignore[index]
    log = read_all(cluster.bootstrap_servers, "t", 1, at_least=RECORDS)
    assert sorted(set(log)) == sorted(sent.acked)
