"""add-partitions against a real cluster, under the workload: the ledger producer writes to the
new partitions within seconds, a consumer group is rebalanced onto them, and the end offsets
and the final log read cover them although the spec's count (2 here) is lower. A group with
auto.offset.reset=latest skips what the new partitions held before it saw them, and is
still known to have reached their end (so the drain completes and the skipped records
count as lost_never_consumed). Both grow a topic of their own on the default KRaft cluster,
shared (the plugin's pool), and look at the history from their own start on."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import KafkaCluster
from harness.faults.registry import make_fault
from harness.results.tables import CONSUMED, concat
from harness.spec.consumers import GroupConsumerSpec
from harness.spec.producer import ProducerSpec
from harness.workload.group.supervisor import GroupSupervisor
from harness.workload.log_reader import end_offsets, read_log
from harness.workload.producer.thread import ProducerThread
from harness.workload.runtime import Runtime
from tests.integration.kafka_io import wait_until

pytestmark = [pytest.mark.docker, pytest.mark.kafka_cluster(mode="kraft", shared=True)]

NEW = {2, 3}


def test_grow_a_topic_under_the_workload(kafka_cluster: KafkaCluster, tmp_path: Path) -> None:
    cluster, topic = kafka_cluster, "grown"
    since = len(cluster.history.events)  # a shared cluster's history holds earlier tests' too
    cluster.create_topic(topic, partitions=2, replication_factor=3)
    cluster.admin.ensure_offsets_topic()
    bootstrap = cluster.bootstrap_servers
    runtime = Runtime(bootstrap, topic, tmp_path, max_s=600, seed=0)
    group = GroupSupervisor(
        "group", GroupConsumerSpec(group="grown", members=2), runtime, cluster.history
    )
    producer = ProducerThread(
        ProducerSpec(rate=200, duration_s=600),
        Runtime(bootstrap, topic, tmp_path / "producer", max_s=900, seed=0),
        cluster.history,
    )

    def acked_on(partitions: set[int]) -> int:
        return sum(
            1
            for st, p in zip(producer.status, producer.partition, strict=False)
            if st == "ok" and p in partitions
        )

    try:
        group.start()
        wait_until(lambda: not group.unready(), 60, "both members assigned")
        producer.start()
        wait_until(lambda: producer.acked >= 200, 60, "records acked before growing")
        make_fault("add-partitions", cluster, topic, {"count": 4}).inject()
        # Any broker answers the admin client; one whose metadata lags may still say 2.
        wait_until(
            lambda: sorted(cluster.partition_states(topic)) == [0, 1, 2, 3],
            30,
            "every view with four partitions",
        )
        # The producer learns of them at its next metadata refresh (5 s by default here).
        wait_until(lambda: acked_on(NEW) >= 200, 90, "records acked on the new partitions")
        producer.stop()
        producer.join(120)
        assert producer.crashed is None and producer.failed == 0

        ends = end_offsets(bootstrap, topic, at_least=2)
        assert set(ends) == {0, 1, 2, 3} and all(ends[p] > 0 for p in NEW)
        # The group was rebalanced onto the new partitions and read them to the end.
        wait_until(lambda: not any(group.lag(ends).values()), 90, "the group at the log end")
    finally:
        producer.stop()
        group.stop()

    log = read_log(bootstrap, topic, at_least=2, timeout_s=60)
    assert log.complete and set(log.ends) == {0, 1, 2, 3}
    acked = {seq for seq, st in enumerate(producer.status) if st == "ok"}
    assert acked <= set(log.seq), "an acknowledged record is missing from the final read"
    assert {p for p in log.partition if p in NEW} == NEW

    consumed = concat(CONSUMED, group.consumed_tables())
    assert set(consumed.column("partition").to_pylist()) >= NEW
    heals = [e.fields for e in cluster.history.events[since:] if e.kind == "fault.heal"]
    assert len(heals) == 1
    assert (heals[0]["before"], heals[0]["after"], heals[0]["completed"]) == (2, 4, True)
    assert heals[0]["target"] == topic and heals[0]["count"] == 4


def test_a_latest_group_skips_new_partitions_yet_reaches_their_end(
    kafka_cluster: KafkaCluster, tmp_path: Path
) -> None:
    cluster, topic = kafka_cluster, "grown-latest"
    cluster.create_topic(topic, partitions=2, replication_factor=3)
    cluster.admin.ensure_offsets_topic()
    bootstrap = cluster.bootstrap_servers
    spec = GroupConsumerSpec(group="grown-latest", config={"auto.offset.reset": "latest"})
    runtime = Runtime(bootstrap, topic, tmp_path, max_s=600, seed=0)
    group = GroupSupervisor("group", spec, runtime, cluster.history)

    def write(records: int) -> ProducerThread:
        producer = ProducerThread(
            ProducerSpec(rate=400, records=records),
            Runtime(bootstrap, topic, tmp_path / f"producer-{records}", max_s=900, seed=0),
            cluster.history,
        )
        producer.start().join(120)
        assert producer.acked == records
        return producer

    def at_the_end() -> bool:
        return not any(group.lag(end_offsets(bootstrap, topic, at_least=2)).values())

    try:
        group.start()
        wait_until(lambda: not group.unready(), 60, "the member assigned")
        write(200)
        wait_until(at_the_end, 60, "the group at the end of partitions 0 and 1")
        group.stop()  # the group is away while the topic grows and the new partitions fill
        make_fault("add-partitions", cluster, topic, {"count": 4}).inject()
        later = write(400)
        assert {p for p in later.partition if p is not None} >= NEW
        group.start()  # 0, 1 resume from their commits; 2, 3 have none: latest, their end
        wait_until(at_the_end, 90, "the group at the end of all four partitions")
    finally:
        group.stop()

    consumed = concat(CONSUMED, group.consumed_tables())
    assert not NEW & set(consumed.column("partition").to_pylist()), (
        "records of the new partitions were read"
    )
    ends = end_offsets(bootstrap, topic, at_least=2)
    assert all(ends[p] > 0 for p in NEW)  # records were there, and the group passed them
