"""The heal sweep (harness.faults.healing) over fake nodes: every fault healed, newest
first; whatever a fault left (paused, stopped, iptables chains) is swept; a heal that
fails does not stop the others."""

from __future__ import annotations

import pytest

from harness import HarnessError
from harness.faults import KillFault, PartitionFault, PauseFault, StopFault, healing
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
