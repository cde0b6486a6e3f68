"""decommission's plan (pure) and the add-broker / decommission operations against fakes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from harness.errors import FaultError
from harness.faults import decommission, registry
from harness.faults.control import PartitionState
from harness.faults.decommission import plan_decommission
from tests.unit.fakes import FakeCluster, FakeNode


def test_each_replica_of_the_broker_goes_to_the_least_loaded_other_broker() -> None:
    assignment = {
        "t": {0: [1, 2, 3], 1: [2, 3, 4], 2: [3, 1, 2]},
        "__consumer_offsets": {0: [1], 1: [4]},
    }
    # Load without broker 1: 2 -> 3, 3 -> 3, 4 -> 2 replicas.
    plan = plan_decommission(1, assignment, [1, 2, 3, 4])
    assert plan == {
        "__consumer_offsets": {0: [4]},  # 4 is least loaded (2), then holds 3
        "t": {0: [4, 2, 3], 2: [3, 4, 2]},  # 4 is the only broker outside [1, 2, 3]
    }


def test_the_replacement_takes_the_broker_s_slot_and_others_keep_theirs() -> None:
    plan = plan_decommission(2, {"t": {0: [3, 2, 1]}}, [1, 2, 3, 4])
    assert plan == {"t": {0: [3, 4, 1]}}  # the preferred leader (3) stays first


def test_moves_spread_over_equally_loaded_brokers_lowest_id_first() -> None:
    assignment = {"t": {p: [1] for p in range(4)}}
    plan = plan_decommission(1, assignment, [1, 2, 3])
    assert plan == {"t": {0: [2], 1: [3], 2: [2], 3: [3]}}
    assert plan == plan_decommission(1, assignment, [3, 2, 1])  # deterministic


def test_partitions_without_the_broker_do_not_move() -> None:
    assert plan_decommission(5, {"t": {0: [1, 2], 1: [2, 3]}}, [1, 2, 3, 5]) == {}


def test_too_few_brokers_is_named() -> None:
    with pytest.raises(FaultError) as info:
        plan_decommission(1, {"t": {0: [1, 2, 3], 1: [2, 3]}}, [1, 2, 3])
    message = str(info.value)
    assert "t/0 [1, 2, 3]" in message and "t/1" not in message
    assert "usable brokers besides it: [2, 3]" in message
    assert "more running brokers than the replication factor" in message


def test_only_candidates_replace() -> None:
    with pytest.raises(FaultError, match="besides it: none"):
        plan_decommission(1, {"t": {0: [1]}}, [1])


# --- the operations, against a fake cluster -------------------------------------------------
@dataclass
class OpsCluster(FakeCluster):
    """FakeCluster plus the Operable face: topics with assignments, spares, retire."""

    assignment: dict[str, dict[int, list[int]]] = field(default_factory=dict)
    spares: list[int] = field(default_factory=list)
    retired: list[int] = field(default_factory=list)

    def topic_names(self) -> list[str]:
        return sorted(self.assignment)

    def partition_states(self, topic: str) -> dict[int, PartitionState]:
        return {
            p: PartitionState(p, r[0], tuple(r), tuple(r))
            for p, r in self.assignment[topic].items()
        }

    def reassign(self, topic: str, moves: Mapping[int, Sequence[int]]) -> None:
        self.assignment[topic].update({p: list(r) for p, r in moves.items()})

    def reassignments_in_progress(self) -> set[tuple[str, int]]:
        return set()

    def add_partitions(self, topic: str, total: int) -> None:
        raise AssertionError("not an operation of these tests")

    def wait_all_led(self, topic: str, partitions: int, timeout_s: float) -> None:
        raise AssertionError("not an operation of these tests")

    def under_replicated(self) -> list[tuple[str, int]]:
        return []

    def spare_ids(self) -> list[int]:
        return sorted(self.spares)

    def add_broker(self, broker_id: int) -> FakeNode:
        self.spares.remove(broker_id)
        node = FakeNode(self, f"broker-{broker_id}", broker_id, "broker")
        self.nodes.append(node)
        return node

    def retire(self, broker_id: int) -> None:
        node = self.node(broker_id)
        node.stop()
        self.nodes.remove(node)
        self.retired.append(broker_id)


@pytest.fixture
def reassigned(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[int, list[int]]]]:
    """reassign_and_wait as decommission calls it: each call recorded, the move applied."""
    calls: list[tuple[str, dict[int, list[int]]]] = []

    def fake(
        ops: Any, topic: str, moves: Mapping[int, Sequence[int]], timeout_s: float
    ) -> dict[str, Any]:
        assert timeout_s > 0
        calls.append((topic, {p: list(r) for p, r in moves.items()}))
        ops.assignment[topic].update({p: list(r) for p, r in moves.items()})
        return {"moved": len(moves)}

    monkeypatch.setattr(decommission, "reassign_and_wait", fake)
    return calls


def events(cluster: FakeCluster) -> list[tuple[str, dict[str, Any]]]:
    return [(e.kind, e.fields) for e in cluster.history.events if e.kind.startswith("fault.")]


def test_decommission_moves_every_replica_then_retires(
    reassigned: list[tuple[str, dict[int, list[int]]]],
) -> None:
    cluster = OpsCluster(
        brokers_n=4,
        assignment={"t": {0: [1, 2, 3], 1: [2, 3, 4]}, "__consumer_offsets": {0: [4, 1]}},
    )
    fault = registry.make_fault("decommission", cluster, 1, {"timeout_s": 30})
    fault.inject()
    assert reassigned == [("__consumer_offsets", {0: [4, 2]}), ("t", {0: [4, 2, 3]})]
    assert cluster.retired == [1] and 1 not in cluster.brokers
    assert not any(1 in r for parts in cluster.assignment.values() for r in parts.values())
    (inject, at), (heal, outcome) = events(cluster)
    assert (inject, heal) == ("fault.inject", "fault.heal")
    assert at["target"] == "broker-1" and at["operation"] is True and at["timeout_s"] == 30
    assert outcome["broker"] == 1 and outcome["retired"] is True and outcome["completed"]
    assert outcome["moved"] == {"__consumer_offsets": 1, "t": 1}
    assert outcome["voter"] is True  # the fakes are KRaft combined nodes


def test_decommission_leaves_out_brokers_under_a_fault(
    reassigned: list[tuple[str, dict[int, list[int]]]],
) -> None:
    cluster = OpsCluster(brokers_n=4, assignment={"t": {0: [1]}})
    registry.make_fault("isolate", cluster, 2).inject()
    registry.make_fault("decommission", cluster, 1).inject()
    assert reassigned == [("t", {0: [3]})]  # 2 holds nothing but is cut off


def test_decommission_that_cannot_move_fails_with_the_reason_and_keeps_the_broker(
    reassigned: list[tuple[str, dict[int, list[int]]]],
) -> None:
    cluster = OpsCluster(brokers_n=3, assignment={"t": {0: [1, 2, 3]}})
    fault = registry.make_fault("decommission", cluster, 1)
    with pytest.raises(FaultError, match="no usable broker outside the replicas of t/0"):
        fault.inject()
    assert reassigned == [] and cluster.retired == [] and cluster.node(1).is_up()
    outcome = events(cluster)[-1][1]
    assert outcome["completed"] is False and outcome["retired"] is False
    assert "no usable broker" in outcome["error"]


def test_decommission_takes_a_running_broker() -> None:
    cluster = OpsCluster(brokers_n=4, assignment={"t": {0: [1]}})
    cluster.node(1).kill()
    with pytest.raises(FaultError, match="running broker; broker-1 is exited"):
        registry.make_fault("decommission", cluster, 1).inject()
    with pytest.raises(FaultError, match="takes a broker, not 'zookeeper'"):
        registry.make_fault("decommission", OpsCluster(mode="zookeeper"), "zookeeper").inject()


@pytest.mark.parametrize(("target", "started"), [(None, 4), ("broker:5", 5)])
def test_add_broker_starts_the_named_or_next_spare(target: str | None, started: int) -> None:
    cluster = OpsCluster(brokers_n=3, spares=[4, 5])
    registry.make_fault("add-broker", cluster, target).inject()
    assert started in cluster.brokers and started not in cluster.spare_ids()
    (_, at), (_, outcome) = events(cluster)
    assert at["target"] == f"broker-{started}"
    assert outcome["broker"] == started and outcome["registered"] is True
    assert outcome["completed"] is True and "elapsed_s" in outcome


def test_add_broker_without_a_spare_left_fails() -> None:
    cluster = OpsCluster(brokers_n=3, spares=[4])
    registry.make_fault("add-broker", cluster, None).inject()
    with pytest.raises(FaultError, match=r"a spare broker is not a spare left .*none"):
        registry.make_fault("add-broker", cluster, None).inject()
    with pytest.raises(FaultError, match=r"'broker:2' is not a spare left"):
        registry.make_fault("add-broker", OpsCluster(spares=[4]), "broker:2").inject()
    assert events(cluster)[-1][1]["completed"] is False
