"""A dynamic KRaft quorum (KIP-853) on a real cluster: the controllers are formatted as its
initial voters with the harness's directory ids, a dead voter is replaced by a spare
controller (add-controller, then remove-controller), Kafka's own `describe --status` lists
the voter set the operations meant, and the cluster still takes writes."""

from __future__ import annotations

import pytest

from harness import DEFAULT_VERSION
from harness.faults import registry
from harness.faults.operation import Operation
from harness.nodes.dynamic_quorum import directory_id
from tests.integration.conftest import ClusterFactory
from tests.integration.kafka_io import produce, read_all

# make test-slow (nightly): the replace-controller incident (experiments/incidents/, nightly
# on 3.9.2 and 4.3.1) runs the same add-controller and remove-controller on a dynamic quorum;
# the format arguments, plans and tool output are tests/unit/test_dynamic_quorum.py's.
pytestmark = [pytest.mark.docker, pytest.mark.slow_lane]


def test_a_spare_controller_replaces_a_dead_voter(start_cluster: ClusterFactory) -> None:
    # One broker: the quorum is what is under test, and five JVMs share two cores.
    cluster = start_cluster(
        brokers=1,
        controllers=3,
        dynamic_quorum=True,
        spare_controllers=1,
        version=DEFAULT_VERSION,
    )
    cluster_id = cluster._running().cluster_id
    assert cluster_id is not None
    before = cluster.quorum_status()
    # Formatted with --initial-controllers: the voters carry the harness's directory ids.
    assert before.voters == {i: directory_id(cluster_id, i) for i in (101, 102, 103)}
    assert cluster.spare_controller_ids() == [104]

    kill = cluster.kill(101)  # the machine is gone for good
    added = registry.make_fault("add-controller", cluster, None).inject()
    assert isinstance(added, Operation) and added.outcome["completed"] is True
    assert added.outcome["controller"] == 104
    assert added.outcome["voters_after"] == [101, 102, 103, 104]
    assert cluster.spare_controller_ids() == []

    removed = registry.make_fault("remove-controller", cluster, 101).inject()
    assert isinstance(removed, Operation) and removed.outcome["completed"] is True
    assert removed.outcome["directory_id"] == directory_id(cluster_id, 101)
    assert removed.outcome["voters_after"] == [102, 103, 104]

    # Kafka's own view, asked again: the dead voter out, the spare in (with a directory id of
    # its own: it was formatted with --no-initial-controllers).
    after = cluster.quorum_status()
    assert after.voter_ids == [102, 103, 104]
    assert after.leader in (102, 103, 104)
    assert after.voters[104] not in ("", *(directory_id(cluster_id, i) for i in (101, 102, 103)))

    # The kill's window was closed without its heal: heal_all does not start the removed voter.
    assert not kill.active
    cluster.heal_all()
    [gone] = cluster.retired
    assert gone.name == "controller-101" and gone.status() == "exited"
    assert cluster.quorum_status().voter_ids == [102, 103, 104]

    # The replaced quorum runs the cluster: a new topic is created and takes acks=all writes.
    cluster.create_topic("after-replace", partitions=1, replication_factor=1)
    sent = produce(cluster.bootstrap_servers, "after-replace", 200, acks="all")
    assert len(sent.acked) == 200, sent.failed
    seen = read_all(cluster.bootstrap_servers, "after-replace", 1, at_least=200)
    assert sorted(seen) == list(range(200))
