"""The spec shapes of issue 9's kinds: each option is taken only by its kinds, targets are
checked against the cell, and every mistake names its key (no Docker)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.faults.add_partitions import AddPartitions
from harness.faults.reassign import Reassign
from harness.faults.rolling_restart import RollingRestart
from harness.faults.split import Split
from harness.nemesis.schedule import plan_faults
from harness.spec import expand_cells, load_spec
from tests.unit.test_spec import errors_of, write

BASE = "name: ops\nproducer: {records: 100}\n"


def fault(text: str, cluster: str = "{}", topic: str = "{}") -> str:
    return f"{BASE}cluster: {cluster}\ntopic: {topic}\nfaults: [{text}]\n"


GOOD = [
    "{at_s: 1, kind: reassign, target: chaos/0, to: [3, 1, 2]}",
    "{at_s: 1, kind: reassign, target: __consumer_offsets, replication_factor: 3}",
    "{at_s: 1, kind: add-partitions, count: 9}",
    "{at_s: 1, kind: add-partitions, target: chaos, count: 9, timeout_s: 60}",
    "{at_s: 1, kind: split, target: leader-of:chaos/0, side: minority, duration_s: 20}",
    "{at_s: 1, kind: split, sides: [[1], [2, 3]], duration_s: 20}",
    "{at_s: 1, kind: lossy, target: leader-of:chaos/0, loss: 0.3, duration_s: 30}",
    "{at_s: 1, kind: lossy, target: broker:2, loss: 1, scope: clients, duration_s: 30}",
    "{at_s: 1, kind: cut-quorum, target: broker:2, duration_s: 10}",
    "{at_s: 1, kind: rolling-restart}",
    "{at_s: 1, kind: rolling-restart, brokers: [3, 1], hard: true}",
    "{at_s: 1, kind: restart, target: broker:1, hard: true}",
]


@pytest.mark.parametrize("text", GOOD)
def test_the_shapes_of_the_issue_load(tmp_path: Path, text: str) -> None:
    [cell] = expand_cells(load_spec(write(tmp_path, fault(text))))
    loaded = cell.spec.faults[0]
    assert loaded.kind in text and all(key in text for key in loaded.options_set())


def test_spares_make_add_broker_and_decommission_valid(tmp_path: Path) -> None:
    text = (
        "{at_s: 1, kind: add-broker}, {at_s: 2, kind: add-broker, target: 'broker:5'}, "
        "{at_s: 3, kind: decommission, target: 'broker:1'}"
    )
    [cell] = expand_cells(load_spec(write(tmp_path, fault(text, cluster="{spare_brokers: 2}"))))
    assert [f.kind for f in cell.spec.faults] == ["add-broker", "add-broker", "decommission"]


@pytest.mark.parametrize(
    ("text", "cluster", "expected"),
    [
        (
            "{at_s: 1, kind: kill, target: broker:1, loss: 0.3}",
            "{}",
            "faults[0].loss: kill takes no loss (it takes: wipe)",
        ),
        (
            "{at_s: 1, kind: reassign, target: chaos/0}",
            "{}",
            "faults[0].to: reassign takes either to (one partition's replicas) or replication_factor",
        ),
        (
            "{at_s: 1, kind: reassign, target: chaos, to: [1, 2]}",
            "{}",
            "faults[0].target: to moves one partition: expected <topic>/<partition>",
        ),
        (
            "{at_s: 1, kind: reassign, target: chaos/0, to: [1, 7]}",
            "{}",
            "faults[0].to: no broker [7]; brokers (spares included): [1, 2, 3]",
        ),
        (
            "{at_s: 1, kind: reassign, target: __consumer_offsets, replication_factor: 4}",
            "{}",
            "faults[0].replication_factor: expected <= the brokers (spares included: 3) (got 4)",
        ),
        (
            "{at_s: 1, kind: reassign, target: chaos/9, to: [1]}",
            "{}",
            "faults[0].target: expected a partition below topic.partitions (6) (got 9)",
        ),
        (
            "{at_s: 1, kind: reassign, target: chaos, replication_factor: 2, duration_s: 5}",
            "{}",
            "faults[0].duration_s: reassign takes no duration (it is done once, when it fires)",
        ),
        (
            "{at_s: 1, kind: add-partitions, count: 6}",
            "{}",
            "faults[0].count: expected more than topic.partitions (6) (got 6)",
        ),
        (
            "{at_s: 1, kind: add-partitions}",
            "{}",
            "faults[0].count: add-partitions needs count",
        ),
        (
            "{at_s: 1, kind: add-broker}",
            "{}",
            "faults[0].target: add-broker needs cluster.spare_brokers >= 1",
        ),
        (
            "{at_s: 1, kind: add-broker, target: 'broker:2'}",
            "{spare_brokers: 1}",
            "faults[0].target: expected a spare broker (broker:4) or no target",
        ),
        (
            "{at_s: 1, kind: decommission, target: 'broker:1'}",
            "{}",
            "faults[0].kind: decommission moves every replica of a broker to another one: it "
            "needs more brokers (spares included: 3) than the largest replication factor (3)",
        ),
        (
            "{at_s: 1, kind: split, sides: [[1], [1, 2]], duration_s: 5}",
            "{}",
            "faults[0].sides: a node is on more than one side",
        ),
        (
            "{at_s: 1, kind: split, sides: [[1], [2, 9]], duration_s: 5}",
            "{}",
            "faults[0].sides: no node [9]",
        ),
        (
            "{at_s: 1, kind: split, sides: [[1], []], duration_s: 5}",
            "{}",
            "faults[0].sides: expected at least two non-empty sides",
        ),
        (
            "{at_s: 1, kind: split, target: broker:1, sides: [[1], [2]], duration_s: 5}",
            "{}",
            "faults[0].target: give either sides or a target (with side), not both",
        ),
        (
            "{at_s: 1, kind: lossy, target: broker:1, duration_s: 5}",
            "{}",
            "faults[0].loss: lossy needs loss",
        ),
        (
            "{at_s: 1, kind: lossy, target: broker:1, loss: 1.5}",
            "{}",
            "faults[0].loss: expected <= 1 (got 1.5)",
        ),
        (
            "{at_s: 1, kind: lossy, target: broker:1, loss: 0.2, scope: disks}",
            "{}",
            "faults[0].scope: expected one of all, clients, replication, controller (got 'disks')",
        ),
        (
            "{at_s: 1, kind: lossy, target: zookeeper, loss: 0.2}",
            "{mode: zookeeper}",
            "faults[0].target: lossy acts on a broker; ZooKeeper cannot be its target",
        ),
        (
            "{at_s: 1, kind: cut-quorum, target: broker:1}",
            "{mode: zookeeper}",
            "faults[0].kind: cut-quorum exists only in mode kraft",
        ),
        (
            "{at_s: 1, kind: cut-zookeeper, target: broker:1}",
            "{}",
            "faults[0].kind: cut-zookeeper exists only in mode zookeeper",
        ),
        (
            "{at_s: 1, kind: rolling-restart, target: broker:1}",
            "{}",
            "faults[0].target: rolling-restart takes no target (got 'broker:1')",
        ),
        (
            "{at_s: 1, kind: rolling-restart, brokers: [1, 1]}",
            "{}",
            "faults[0].brokers: a broker is listed twice",
        ),
        (
            "{at_s: 1, kind: kill}",
            "{brokers: 3, spare_brokers: 3}",
            "cluster.spare_brokers: expected brokers + spare_brokers <= 5 (got 3 + 3)",
        ),
    ],
)
def test_a_wrong_option_names_its_key(
    tmp_path: Path, text: str, cluster: str, expected: str
) -> None:
    lines = errors_of(tmp_path, fault(text, cluster))
    assert any(expected in line for line in lines), lines


def test_options_reach_the_plan_and_targets_follow_the_kind(tmp_path: Path) -> None:
    text = (
        "{at_s: 1, kind: reassign, target: __consumer_offsets, replication_factor: 3}, "
        "{at_s: 2, kind: add-partitions, count: 9, optional: true}, "
        "{at_s: 3, kind: split, sides: [[1], [2, 3]], duration_s: 5}, "
        "{at_s: 4, kind: add-broker}, {at_s: 5, kind: rolling-restart, brokers: [2]}, "
        "{at_s: 6, kind: split, side: majority, duration_s: 5}"
    )
    spec = load_spec(write(tmp_path, fault(text, cluster="{spare_brokers: 1}")))
    [cell] = expand_cells(spec)
    plan = {p.index: p for p in plan_faults(cell, seed=7)}
    assert plan[0].target == "__consumer_offsets"
    s = {i: p.spec for i, p in plan.items()}
    assert isinstance(s[0], Reassign) and isinstance(s[1], AddPartitions)
    assert isinstance(s[2], Split) and isinstance(s[4], RollingRestart) and isinstance(s[5], Split)
    assert s[0].given() == {"replication_factor": 3}
    assert (plan[1].target, s[1].count, plan[1].optional) == ("chaos", 9, True)
    assert plan[2].target == "" and s[2].sides == [[1], [2, 3]]
    assert plan[3].target == ""  # the next spare
    assert plan[4].target == "" and s[4].brokers == [2]
    assert plan[5].target.startswith("broker:") and s[5].side == "majority"
    assert not plan[0].optional
