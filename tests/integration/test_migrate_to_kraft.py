"""migrate-to-kraft against a real cluster: a 3-broker ZooKeeper-mode 3.9.2 cluster migrated to
KRaft (3 controllers) under an acks=all load keeps every acknowledged record and ends as a
KRaft cluster: its brokers and controllers run without ZooKeeper, the active controller is the
quorum's leader (the spec rules and the step plan: tests/unit/test_migrate_to_kraft.py)."""

from __future__ import annotations

import pytest

from harness.faults.registry import make_fault
from tests.integration.conftest import ClusterFactory
from tests.integration.kafka_io import producing, read_all

# make test-slow (nightly): the migration is the zk-to-kraft-migration experiment's too
# (experiments/operations/, in the nightly suite on real load); its steps' spec rules and
# timing are tests/unit/test_migrate_to_kraft.py's. make test keeps ZooKeeper mode in
# test_network_faults.py's ZooKeeper cut and test_produce_consume.py.
pytestmark = [pytest.mark.docker, pytest.mark.slow_lane]


def test_zookeeper_392_migrates_to_kraft_under_acks_all_load_losing_nothing(
    start_cluster: ClusterFactory,
) -> None:
    cluster = start_cluster(
        mode="zookeeper",
        brokers=3,
        version="3.9.2",
        broker_config={"min.insync.replicas": 2},
        persistent_data=True,
        migration_controllers=3,
    )
    cluster.create_topic("t", partitions=3, replication_factor=3)
    assert cluster.controller() in (1, 2, 3)  # a broker: ZooKeeper's controller
    with producing(cluster.bootstrap_servers, "t", per_second=50) as sent:
        fault = make_fault("migrate-to-kraft", cluster, None, {"timeout_s": 240})
        fault.inject()

    assert cluster.mode == "kraft"
    assert cluster.controller() in (101, 102, 103)  # the KRaft quorum's leader
    events = [e.fields for e in cluster.history.events if e.kind.startswith("fault.")]
    phases = [f["phase"] for f in events if f["fault"] == "migration-step"]
    assert phases.count("broker-migrating") == phases.count("broker-kraft") == 6  # 3 windows
    assert phases.count("controller-final") == 6 and phases.count("await-migration") == 2
    outcome = events[-1]
    assert outcome["fault"] == "migrate-to-kraft" and outcome["fault_id"] == fault.id
    assert outcome["completed"] is True, outcome
    assert outcome["mode"] == "kraft" and len(outcome["steps"]) == 11
    for node in cluster.nodes:
        if node.node_id is None:
            continue
        config = node.exec("cat", "/etc/kafka-chaos/kafka.properties")[1]
        assert "zookeeper.connect" not in config, node.name
        assert "zookeeper.metadata.migration.enable" not in config, node.name
    assert (
        "process.roles=broker"
        in cluster.node(1).exec("cat", "/etc/kafka-chaos/kafka.properties")[1]
    )
    assert cluster.under_replicated() == []

    assert len(sent.acked) > 0
    seen = read_all(cluster.bootstrap_servers, "t", 3, at_least=len(sent.acked))
    lost = set(sent.acked) - set(seen)
    assert not lost, f"{len(lost)} acknowledged records lost, e.g. {sorted(lost)[:5]}"
