"""reassign against real clusters: Kafka's own reassignment tool moves replicas for real.

One partition moved off its leader while a producer writes (ZooKeeper mode, 3.9), and the
`__consumer_offsets` incident's fix: its replication factor raised from 1 to 3 (KRaft, the
newest 4.x), after which every offsets partition has three replicas in its ISR. The move
leaves its cluster healthy: it runs on the default ZooKeeper-mode cluster, shared (the
plugin's pool), with a topic of its own and the history from its own start on.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness import KafkaCluster
from harness.faults.registry import make_fault
from harness.nodes.images import built_versions
from harness.results.history import History
from tests.integration.conftest import ClusterFactory
from tests.integration.kafka_io import producing, read_all, try_commit, wait_until

pytestmark = pytest.mark.docker


def operation_events(history: History, since: int = 0) -> list[dict[str, Any]]:
    """The fault events from the `since`-th event of the history on."""
    events = history.events[since:]
    return [{"kind": e.kind, **e.fields} for e in events if e.kind.startswith("fault.")]


@pytest.mark.kafka_cluster(mode="zookeeper", shared=True)
def test_move_one_partition_off_its_leader_while_producing(kafka_cluster: KafkaCluster) -> None:
    cluster, topic = kafka_cluster, "moved"
    since = len(cluster.history.events)  # a shared cluster's history holds earlier tests' too
    cluster.create_topic(topic, partitions=2, replication_factor=2)
    before, untouched = cluster.partition_states(topic)[0], cluster.replicas(topic, 1)
    assert before.leader is not None
    newcomer = next(b for b in (1, 2, 3) if b not in before.replicas)
    follower = next(b for b in before.replicas if b != before.leader)
    target = (newcomer, follower)  # the leader's replica leaves: leadership must move too

    with producing(cluster.bootstrap_servers, topic, per_second=200) as result:
        wait_until(lambda: len(result.acked) >= 200, 60, "records acked before the move")
        make_fault("reassign", cluster, f"{topic}/0", {"to": list(target)}).inject()
        after_move = len(result.acked)
        wait_until(lambda: len(result.acked) >= after_move + 200, 60, "records acked after it")

    after = cluster.partition_states(topic)[0]
    assert after.replicas == target
    assert sorted(after.isr) == sorted(target)
    assert after.leader in target and after.leader != before.leader
    assert cluster.replicas(topic, 1) == list(untouched)
    assert not result.failed
    seen = read_all(cluster.bootstrap_servers, topic, 2, at_least=len(result.acked))
    assert set(result.acked) <= set(seen), "an acknowledged record is missing from the log"

    inject, heal = operation_events(cluster.history, since)
    assert (inject["kind"], heal["kind"]) == ("fault.inject", "fault.heal")
    assert heal["completed"] is True and heal["topic"] == topic and heal["moved"] == 1
    assert heal["before"] == {"0": list(before.replicas)}
    assert heal["after"] == {"0": list(target)}


def test_raise_the_offsets_topic_from_rf1_to_rf3(start_cluster: ClusterFactory) -> None:
    newest = max(built_versions(), key=lambda v: tuple(int(x) for x in v.split(".")))
    cluster = start_cluster(
        mode="kraft",
        brokers=3,
        version=newest,
        broker_config={"offsets.topic.replication.factor": 1},
    )
    cluster.create_topic("t", partitions=1, replication_factor=3)
    placement = cluster.offsets_topic_placement()  # creates it (Kafka does so lazily)
    assert len(placement) == 50 and all(len(r) == 1 for r in placement.values())

    make_fault("reassign", cluster, "__consumer_offsets", {"replication_factor": 3}).inject()

    states = cluster.partition_states("__consumer_offsets")
    assert len(states) == 50
    for p, s in states.items():
        assert sorted(s.replicas) == [1, 2, 3] and sorted(s.isr) == [1, 2, 3], (p, s)
        assert s.replicas[0] == placement[p][0]  # the old replica stays the preferred leader
    assert cluster.reassignments_in_progress() == set()
    # Groups still work on the moved partitions.
    wait_until(lambda: try_commit(cluster.bootstrap_servers, "g", "t", 1) == "ok", 60, "a commit")

    inject, heal = operation_events(cluster.history)
    assert (inject["kind"], heal["kind"]) == ("fault.inject", "fault.heal")
    assert heal["completed"] is True and heal["moved"] == 50
    assert heal["replication_factor"] == 3 and heal["target"] == "__consumer_offsets"
