"""upgrade against a real cluster: a 3-broker 3.9.2 KRaft cluster rolled to 4.3.1 one node at a
time under an acks=all load keeps every acknowledged record, ends with every node on 4.3.1
and metadata.version finalized to 4.3 (the spec rules: tests/unit/test_upgrade.py)."""

from __future__ import annotations

import pytest

from harness.faults.registry import make_fault
from tests.integration.conftest import ClusterFactory
from tests.integration.kafka_io import producing, read_all, wait_until

pytestmark = pytest.mark.docker


# make test-slow (nightly): an upgrade step is a container replaced on another image, as
# test_power_loss.py's and test_kill_wipe.py's restarts are (make test); the whole upgrade
# under load is the rolling-upgrade experiment's (experiments/operations/, nightly).
@pytest.mark.slow_lane
def test_upgrade_392_to_431_under_acks_all_load_loses_nothing(
    start_cluster: ClusterFactory,
) -> None:
    cluster = start_cluster(
        mode="kraft",
        brokers=3,
        version="3.9.2",
        broker_config={"min.insync.replicas": 2},
        persistent_data=True,
    )
    cluster.create_topic("t", partitions=3, replication_factor=3)
    assert cluster.features()["metadata.version"].startswith("3.9")
    with producing(cluster.bootstrap_servers, "t", per_second=50) as sent:
        fault = make_fault("upgrade", cluster, None, {"to_version": "4.3.1", "finalize": True})
        fault.inject()

    assert cluster.node_versions() == {f"broker-{b}": "4.3.1" for b in (1, 2, 3)}
    assert cluster.version == "4.3.1"
    events = [e.fields for e in cluster.history.events if e.kind.startswith("fault.")]
    steps = [(f["fault"], f["target"]) for f in events if f["fault"] == "upgrade-step"]
    assert sorted({t for _, t in steps}) == ["broker-1", "broker-2", "broker-3"]
    assert len(steps) == 6  # an inject and a heal per node: each its own window
    outcome = events[-1]
    assert outcome["fault"] == "upgrade" and outcome["fault_id"] == fault.id
    assert outcome["completed"] is True, outcome
    assert (outcome["from_version"], outcome["to_version"]) == ("3.9.2", "4.3.1")
    assert outcome["metadata_version"].startswith("4.3"), outcome["features"]
    assert cluster.features()["metadata.version"].startswith("4.3")
    assert cluster.under_replicated() == []
    # Each node's log holds both lives: the 3.9.2 server's start-up and the 4.3.1 one's.
    assert cluster.node(1).logs().count("Kafka Server started") == 2

    # The finalized cluster (kraft.version 1 too with --release-version) still takes a
    # restart of a node configured with static controller.quorum.voters, as faults do.
    cluster.restart(2)
    assert cluster.node(2).logs().count("Kafka Server started") == 3
    assert len(sent.acked) > 0
    seen = read_all(cluster.bootstrap_servers, "t", 3, at_least=len(sent.acked))
    lost = set(sent.acked) - set(seen)
    assert not lost, f"{len(lost)} acknowledged records lost, e.g. {sorted(lost)[:5]}"


# Slow lane (nightly): an upgrade step's path is test_upgrade_392_to_431's, a ZooKeeper-mode kill
# test_offsets_incident[3-zookeeper]'s.
@pytest.mark.slow_lane
def test_a_zookeeper_broker_killed_during_its_step_comes_back_on_the_new_container(
    start_cluster: ClusterFactory,
) -> None:
    """A kill planned during a broker's upgrade step leaves its ZooKeeper registration
    behind for zookeeper.session.timeout.ms: the new container exits on it at first
    (NodeExistsException) and is started again like a supervisor, as after a kill.

    First the kill itself, healed at once: its old ZooKeeper session still holds
    /brokers/ids/2 (NodeExistsException at start-up), and the heal restarts it like a
    supervisor until the session expires and it registers. Each part reads the history from
    its own start on."""
    cluster = start_cluster(mode="zookeeper", brokers=3, persistent_data=True)
    fault = cluster.kill(2)
    fault.heal()  # immediately, well inside zookeeper.session.timeout.ms (18 s)
    assert 2 in cluster.brokers
    wait_until(lambda: 2 in cluster.admin.registered_brokers(), 60, "broker 2 registered again")
    failed_at_heal = [e for e in cluster.history.events if e.kind == "node.start_failed"]
    assert all(e.fields["node"] == "broker-2" for e in failed_at_heal)
    assert "NodeExists" in cluster.logs(2) or not failed_at_heal

    since = len(cluster.history.events)
    cluster.create_topic("t", partitions=3, replication_factor=3)
    with producing(cluster.bootstrap_servers, "t", per_second=50) as sent:
        cluster.node(2).kill()
        cluster.replace_node(2, cluster.version)  # at once: its session is still alive
    events = cluster.history.events[since:]
    failed = [e.fields for e in events if e.kind == "node.start_failed"]
    assert failed, "the new container never met the old registration: nothing was exercised"
    assert all(f["node"] == "broker-2" for f in failed)
    assert "NodeExistsException" in cluster.node(2).logs() or "node already exists" in (
        cluster.node(2).logs()
    )
    assert cluster.node(2).is_up()
    assert 2 in cluster.admin.registered_brokers()
    assert [e.kind for e in events].count("node.replaced") == 1
    seen = read_all(cluster.bootstrap_servers, "t", 3, at_least=len(sent.acked))
    assert not set(sent.acked) - set(seen)
