"""The heal sweep (harness.faults.healing) over fake nodes: every fault healed, newest
first; whatever a fault left (paused, stopped, iptables chains) is swept; a heal that
fails does not stop the others."""

from __future__ import annotations

import pytest

from harness import HarnessError
from harness.errors import ClusterStartError
from harness.faults import KillFault, PartitionFault, PauseFault, StopFault, healing
from harness.faults.base import refused_nodes
from harness.nodes import supervised_start
from tests.unit.fakes import FakeCluster


def test_heal_all_heals_newest_first_then_sweeps() -> None:
    cluster = FakeCluster()
    KillFault(cluster, 1).inject()
    PauseFault(cluster, 2).inject()
    cluster.node(3).state = "exited"  # stopped behind the harness's back
    cluster.node(3).chains.add("KC_999")  # a chain whose fault is long gone
    waited: list[float] = []
    healing.heal_all(cluster, waited.append)
    assert [(op, n) for _, op, n in cluster.ops()] == [
        ("kill", "broker-1"),
        ("pause", "broker-2"),
        ("unpause", "broker-2"),
        ("start", "broker-1"),
        ("start", "broker-3"),
    ]
    assert all(n.is_up() and not n.chains for n in cluster.nodes)
    assert len(cluster.faults) == 0 and len(waited) == 1
    assert cluster.history.events[-1].kind == "cluster.healed"


def test_a_failed_heal_does_not_stop_the_others() -> None:
    cluster = FakeCluster()
    PauseFault(cluster, 1).inject()
    partition = PartitionFault.isolate(cluster, 3).inject()
    cluster.node(1).fail["unpause"] = RuntimeError("stuck")
    with pytest.raises(HarnessError, match=r"some heals failed: pause #\d+: stuck"):
        healing.heal_all(cluster, lambda _deadline: None)
    assert not partition.active and not any(n.chains for n in cluster.nodes)
    healed = cluster.history.events[-1]
    assert healed.kind == "cluster.healed" and "stuck" in healed.fields["errors"][0]


def test_start_heals_the_kill_or_stop_of_that_node_only() -> None:
    cluster = FakeCluster()
    kill = KillFault(cluster, 1).inject()
    stop = StopFault(cluster, 2).inject()
    healing.start(cluster, 1)
    assert not kill.active and stop.active
    assert cluster.node(1).is_up() and not cluster.node(2).is_up()


def test_unpause_heals_the_pause() -> None:
    cluster = FakeCluster()
    pause = PauseFault(cluster, 2).inject()
    healing.unpause(cluster, 2)
    assert not pause.active and cluster.node(2).is_up() and len(cluster.faults) == 0


def test_a_node_kafka_refuses_to_start_is_left_down_and_said(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(supervised_start, "RESTART_BACKOFF_S", 0.01)
    cluster = FakeCluster()
    node = cluster.node(1)

    def exits_at_once(timeout_s: float) -> None:  # a log directory Kafka cannot read
        node.state = "exited"
        raise ClusterStartError("broker-1: container is exited before it logged start-up")

    monkeypatch.setattr(node, "wait_started", exits_at_once)
    KillFault(cluster, 1).inject()
    healing.heal_all(cluster, lambda _deadline: None)  # no heal failed: Kafka said no
    starts = [n for _, op, n in cluster.ops() if op == "start"]
    assert starts == ["broker-1"] * supervised_start.MAX_EARLY_EXITS  # not once more after
    assert not node.is_up() and refused_nodes(cluster) == {"broker-1"}
    (refused,) = [e.fields for e in cluster.history.events if e.kind == "node.refused_start"]
    assert "exited before its start-up line 8 times in a row" in refused["error"]
    assert cluster.history.events[-1].fields["errors"] == []
