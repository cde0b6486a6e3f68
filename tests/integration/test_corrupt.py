"""corrupt on real brokers: the newest segment damaged while its broker is down; Kafka's
recovery finds the bad batch (CRC) and truncates there. With three replicas nothing
acknowledged is lost (the broker fetches the rest back); with one, the damaged tail is."""

from __future__ import annotations

import pytest

from harness.faults.registry import make_fault
from tests.integration.conftest import ClusterFactory
from tests.integration.kafka_io import produce, read_all, wait_until

pytestmark = pytest.mark.docker

RECORDS = 2000


def test_a_damaged_segment_is_recovered_and_only_an_unreplicated_tail_is_lost(
    start_cluster: ClusterFactory,
) -> None:
    cluster = start_cluster(mode="kraft", brokers=3)
    cluster.create_topic(
        "r3", partitions=1, replication_factor=3, config={"min.insync.replicas": "2"}
    )
    cluster.create_topic("r1", partitions=1, replication_factor=1)
    sent3 = produce(cluster.bootstrap_servers, "r3", RECORDS, "all")
    # Paced: many small batches, so that a damaged tail is a few of them, not the only one.
    sent1 = produce(cluster.bootstrap_servers, "r1", RECORDS, "all", per_second=400)
    assert len(sent3.acked) == RECORDS and len(sent1.acked) == RECORDS
    leader3, leader1 = cluster.leader("r3", 0), cluster.leader("r1", 0)
    assert leader3 is not None and leader1 is not None

    options = {"partition": "r3/0", "mode": "bitflip", "bytes": 8, "duration_s": 5}
    fault = make_fault("corrupt", cluster, leader3, options)
    fault.inject()
    fault.heal()
    heal = [e for e in cluster.history.events if e.kind == "fault.heal"][-1].fields
    assert heal["came_back"] is True, heal
    wait_until(lambda: leader3 in cluster.isr("r3", 0), 120, "the damaged replica back in the ISR")
    log3 = read_all(cluster.bootstrap_servers, "r3", 1, at_least=RECORDS)
    assert sorted(log3) == sorted(sent3.acked), heal  # another replica held every record

    options = {"partition": "r1/0", "mode": "truncate", "bytes": 3000, "duration_s": 5}
    fault = make_fault("corrupt", cluster, leader1, options)
    fault.inject()
    damaged = [e for e in cluster.history.events if e.kind == "fault.discarded"][-1].fields
    fault.heal()
    heal = [e for e in cluster.history.events if e.kind == "fault.heal"][-1].fields
    assert heal["came_back"] is True, heal
    wait_until(lambda: cluster.leader("r1", 0) == leader1, 60, "r1/0 led again")
    log1 = read_all(cluster.bootstrap_servers, "r1", 1, at_least=1)
    size = damaged["discarded"][cluster.node(leader1).name]
    assert size["size_before"] - size["size_after"] == 3000
    assert 0 < RECORDS - len(log1) < RECORDS, (len(log1), heal["recovery"])  # its tail only
    assert set(log1) <= set(sent1.acked)
