"""split's side planning, lossy's rules per scope, cut-quorum's port-only cut and rolling-restart's
order, on fake nodes (tests/unit/fakes.py); every heal leaves no chain behind."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import pytest

from harness.errors import ConfigError, WaitTimeout
from harness.faults import healing, iptables
from harness.faults.base import Fault
from harness.faults.control import ChaosTarget, NodeRef, Operable
from harness.faults.lossy import LossyFault
from harness.faults.partition import PartitionFault
from harness.faults.registry import make_fault
from harness.faults.rolling_restart import RollingRestart, RollingRestartFault
from tests.unit.fakes import FakeCluster, FakeNode
from tests.unit.test_spec import errors_of


class ControllersCluster(FakeCluster):
    """Brokers 1..n plus dedicated KRaft controllers 101..103."""

    def __post_init__(self) -> None:
        super().__post_init__()
        for node in self.nodes:
            node.is_controller = False
        self.nodes += [FakeNode(self, f"controller-{i}", i, "controller") for i in (101, 102, 103)]


@dataclass
class UnderReplicated(FakeCluster):
    """Operable as far as rolling-restart asks: under_replicated() answers from a script."""

    answers: Iterator[list[tuple[str, int]]] = field(default_factory=lambda: iter([]))

    def under_replicated(self) -> list[tuple[str, int]]:
        return next(self.answers)


def make(kind: str, cluster: FakeCluster, target: NodeRef | None, **options: object) -> Fault:
    """The registry's fault on a fake (which has what these kinds ask of a ChaosTarget)."""
    return make_fault(kind, cast(ChaosTarget, cluster), target, dict(options))


def sides(fault: object) -> list[list[str]]:
    assert isinstance(fault, PartitionFault)
    return [[n.name for n in side] for side in fault.sides]


def planned(cluster: FakeCluster, target: int | None = None, **options: object) -> list[list[str]]:
    return sides(make("split", cluster, target, **options))


def no_chains(cluster: FakeCluster) -> bool:
    return not any(node.chains for node in cluster.nodes)


# --- split --------------------------------------------------------------------------------------
def test_split_named_sides_leave_other_nodes_untouched() -> None:
    cluster = FakeCluster(brokers_n=3, mode="zookeeper")
    fault = make("split", cluster, None, sides=[[1], [2, "zookeeper"]])
    assert sides(fault) == [["broker-1"], ["broker-2", "zookeeper"]]
    fault.inject()
    assert {n.name for n in cluster.nodes if n.chains} == {"broker-1", "broker-2", "zookeeper"}
    event = cluster.history.events[-1]
    assert event.fields["shape"] == "split"
    assert event.fields["sides"] == [["broker-1"], ["broker-2", "zookeeper"]]
    fault.heal()
    assert no_chains(cluster)


def test_split_target_alone_in_the_minority_by_default() -> None:
    assert planned(FakeCluster(brokers_n=3), 2) == [["broker-2"], ["broker-1", "broker-3"]]
    assert planned(FakeCluster(brokers_n=2), 2) == [["broker-2"], ["broker-1"]]


def test_split_fills_the_targets_side_with_brokers_in_id_order() -> None:
    five = FakeCluster(brokers_n=5)
    assert planned(five, 4) == [["broker-4", "broker-1"], ["broker-2", "broker-3", "broker-5"]]
    assert planned(five, 4, side="majority") == [
        ["broker-4", "broker-1", "broker-2"],
        ["broker-3", "broker-5"],
    ]
    assert planned(five, 1, side="minority") == [
        ["broker-1", "broker-2"],
        ["broker-3", "broker-4", "broker-5"],
    ]


def test_split_puts_zookeeper_on_the_majority_unless_told() -> None:
    zk = FakeCluster(brokers_n=3, mode="zookeeper")
    assert planned(zk, 1) == [["broker-1"], ["broker-2", "broker-3", "zookeeper"]]
    assert planned(zk, 1, zookeeper_side="minority") == [
        ["broker-1", "zookeeper"],
        ["broker-2", "broker-3"],
    ]
    assert planned(zk, 1, side="majority") == [
        ["broker-1", "broker-2", "zookeeper"],
        ["broker-3"],
    ]


def test_split_dedicated_controllers_go_with_the_zookeeper_side() -> None:
    cluster = ControllersCluster(brokers_n=3)
    controllers = ["controller-101", "controller-102", "controller-103"]
    assert planned(cluster, 3) == [["broker-3"], ["broker-1", "broker-2", *controllers]]
    assert planned(cluster, 3, zookeeper_side="minority") == [
        ["broker-3", *controllers],
        ["broker-1", "broker-2"],
    ]


@pytest.mark.parametrize(
    ("target", "options", "error"),
    [
        (1, {"sides": [[1], [2]]}, "either sides or a target"),
        (None, {}, "needs sides, or a target"),
        (101, {}, "must be a broker"),
    ],
)
def test_split_refuses_what_it_cannot_plan(
    target: int | None, options: dict[str, object], error: str
) -> None:
    with pytest.raises(ConfigError, match=error):
        planned(ControllersCluster(brokers_n=3), target, **options)


@pytest.mark.parametrize("target", ["controller", "broker:101"])
def test_split_spec_target_must_be_a_broker(tmp_path: Path, target: str) -> None:
    text = (
        "name: s\nproducer: {records: 10}\ncluster: {controllers: 3}\n"
        f"faults: [{{at_s: 1, kind: split, target: '{target}', duration_s: 5}}]\n"
    )
    [error] = errors_of(tmp_path, text)
    assert error.startswith("faults[0].target: split acts on a broker")


def test_split_single_broker_cannot_be_split() -> None:
    with pytest.raises(ConfigError, match="at least two brokers"):
        planned(FakeCluster(brokers_n=1, mode="zookeeper"), 1)


# --- lossy --------------------------------------------------------------------------------------
DROP_30 = ["-m", "statistic", "--mode", "random", "--probability", "0.300000", "-j", "DROP"]


def lossy(cluster: FakeCluster, target: NodeRef, **options: object) -> LossyFault:
    fault = make("lossy", cluster, target, loss=0.3, **options)
    assert isinstance(fault, LossyFault)
    return fault


def test_lossy_all_drops_every_packet_but_loopback() -> None:
    assert lossy(FakeCluster(), 2).rules() == [
        ["-i", "lo", "-j", "RETURN"],
        ["-o", "lo", "-j", "RETURN"],
        [],  # counts what the next rule may drop
        DROP_30,
    ]


def test_lossy_replication_drops_only_with_the_other_brokers() -> None:
    cluster = FakeCluster(brokers_n=3, mode="zookeeper")
    rules = lossy(cluster, 2, scope="replication").rules()
    assert rules[:2] == [["-s", "10.0.0.1"], ["-s", "10.0.0.1", *DROP_30]]
    matches = [rule for rule in rules if "DROP" not in rule]
    assert matches == [
        ["-s", "10.0.0.1"],
        ["-d", "10.0.0.1"],
        ["-s", "10.0.0.3"],
        ["-d", "10.0.0.3"],
    ]  # not ZooKeeper's address (10.0.0.99)
    assert all(rule == [*match, *DROP_30] for match, rule in zip(matches, rules[1::2], strict=True))


def test_lossy_clients_drops_only_on_the_client_port() -> None:
    assert lossy(FakeCluster(), 2, scope="clients").rules() == [
        ["-p", "tcp", "--dport", "9002"],
        ["-p", "tcp", "--dport", "9002", *DROP_30],
        ["-p", "tcp", "--sport", "9002"],
        ["-p", "tcp", "--sport", "9002", *DROP_30],
    ]


LISTING = """Chain KC_7 (2 references)
    pkts      bytes target     prot opt in     out     source               destination
       6      428 RETURN     0    --  lo     *       0.0.0.0/0            0.0.0.0/0
       6      428 RETURN     0    --  *      lo      0.0.0.0/0            0.0.0.0/0
     219    25424            0    --  *      *       0.0.0.0/0            0.0.0.0/0
      56     6689 DROP       0    --  *      *       0.0.0.0/0            0.0.0.0/0            statistic mode random probability 0.29999999981
"""


class CountingNode(FakeNode):
    """Lists a chain with the counters a real iptables printed (captured from a broker)."""

    def exec(self, *argv: str) -> tuple[int, str]:
        if argv[:3] == ("iptables", "-w", "-L"):
            self.commands.append(argv)
            return 0, LISTING
        return super().exec(*argv)


def test_lossy_heal_records_the_dropped_packets_then_removes_its_chain() -> None:
    cluster = FakeCluster()
    cluster.nodes[1] = CountingNode(cluster, "broker-2", 2, "combined")
    fault = lossy(cluster, 2).inject()
    assert cluster.node(2).chains == {iptables.chain_for(fault.id)}
    fault.heal()
    assert no_chains(cluster)
    heal = cluster.history.events[-1]
    assert heal.kind == "fault.heal"
    assert heal.fields | {"fault_id": 0} == {
        "fault_id": 0,
        "fault": "lossy",
        "target": "broker-2",
        "loss": 0.3,
        "scope": "all",
        "matched_packets": 219,
        "dropped_packets": 56,
    }
    assert "matched_packets" not in cluster.history.events[-2].fields  # the inject's


def test_lossy_counters_gone_with_a_restarted_node_are_unknown() -> None:
    cluster = FakeCluster()
    fault = lossy(cluster, 1).inject()
    cluster.node(1).state = "exited"
    fault.heal()
    assert cluster.history.events[-1].fields["dropped_packets"] is None


def test_lossy_needs_a_loss_and_a_broker() -> None:
    with pytest.raises(ConfigError, match="loss"):
        make("lossy", FakeCluster(), 1)
    with pytest.raises(ConfigError, match="acts on a broker"):
        lossy(FakeCluster(mode="zookeeper"), "zookeeper")


def test_heal_all_sweeps_lossy_and_split_chains() -> None:
    cluster = FakeCluster(brokers_n=3, mode="zookeeper")
    lossy(cluster, 1).inject()
    make("split", cluster, 2).inject()
    healing.heal_all(cluster, lambda _deadline: None)
    assert no_chains(cluster) and len(cluster.faults) == 0


# --- cut-quorum ---------------------------------------------------------------------------------
def quorum_rules(node: FakeNode) -> list[str]:
    return [
        line for cmd in node.commands for line in " ".join(cmd).splitlines() if " -A KC_" in line
    ]


def test_cut_quorum_drops_only_controller_traffic_with_the_other_voters() -> None:
    cluster = FakeCluster(brokers_n=3)
    fault = make("cut-quorum", cluster, 1).inject()
    assert sides(fault) == [["broker-1"], ["broker-2", "broker-3"]]
    assert fault.describe()["port"] == 9093 and fault.affected_nodes() == [cluster.node(1)]
    on_target = quorum_rules(cluster.node(1))
    assert len(on_target) == 8 and all("-p tcp" in r and " 9093 -j DROP" in r for r in on_target)
    assert {r.split()[5] for r in on_target} == {"10.0.0.2", "10.0.0.3"}
    assert all("10.0.0.1" in r for r in quorum_rules(cluster.node(2)))
    fault.heal()
    assert no_chains(cluster)


def test_cut_quorum_of_a_broker_with_dedicated_controllers() -> None:
    cluster = ControllersCluster(brokers_n=3)
    fault = make("cut-quorum", cluster, 2)
    assert sides(fault) == [["broker-2"], ["controller-101", "controller-102", "controller-103"]]
    assert sides(make("cut-quorum", cluster, 101)) == [
        ["controller-101"],
        ["controller-102", "controller-103"],
    ]


def test_cut_quorum_needs_kraft() -> None:
    with pytest.raises(ConfigError, match="kraft"):
        make("cut-quorum", FakeCluster(mode="zookeeper"), 1)


# --- rolling-restart ----------------------------------------------------------------------------
def rolling(cluster: UnderReplicated, **options: object) -> RollingRestartFault:
    return RollingRestartFault(cast(Operable, cluster), None, RollingRestart.of(**options))


def test_rolling_restart_every_broker_in_id_order_each_its_own_window() -> None:
    cluster = UnderReplicated(brokers_n=3, answers=iter([[("t", 0)], [], [], [("t", 1)], []]))
    fault = rolling(cluster).inject()
    assert [(op, n) for _, op, n in cluster.ops()] == [
        (op, f"broker-{i}") for i in (1, 2, 3) for op in ("stop", "start")
    ]
    events = [(e.kind, e.fields["fault"], e.fields["target"]) for e in cluster.history.events]
    assert events == [
        ("fault.inject", "rolling-restart", "cluster"),
        *[(k, "restart", f"broker-{i}") for i in (1, 2, 3) for k in ("fault.inject", "fault.heal")],
        ("fault.heal", "rolling-restart", "cluster"),
    ]
    outcome = cluster.history.events[-1].fields
    assert outcome["completed"] is True and outcome["restarted"] == [1, 2, 3]
    assert len(outcome["full_isr_s"]) == 3
    assert not fault.active and len(cluster.faults) == 0


def test_rolling_restart_given_brokers_hard_in_that_order() -> None:
    cluster = UnderReplicated(brokers_n=3, answers=iter([[], []]))
    rolling(cluster, brokers=[3, 1], hard=True).inject()
    assert [(op, n) for _, op, n in cluster.ops()] == [
        ("kill", "broker-3"),
        ("start", "broker-3"),
        ("kill", "broker-1"),
        ("start", "broker-1"),
    ]
    assert cluster.history.events[-1].fields["restarted"] == [3, 1]


def test_rolling_restart_stops_when_the_isr_stays_short() -> None:
    cluster = UnderReplicated(brokers_n=3, answers=iter([[]] + [[("t", 0)]] * 100))
    with pytest.raises(WaitTimeout, match="ISR full again after restarting broker-2"):
        rolling(cluster, timeout_s=0.01).inject()
    heal = cluster.history.events[-1].fields
    assert heal["completed"] is False and heal["restarted"] == [1, 2]
    assert len(heal["full_isr_s"]) == 1
    assert "broker-3" not in {n for _, _, n in cluster.ops()}


def test_rolling_restart_refuses_a_target_and_non_brokers() -> None:
    with pytest.raises(ConfigError, match="no target"):
        RollingRestartFault(cast(Operable, FakeCluster()), 1, RollingRestart.of())
    with pytest.raises(ConfigError, match="brokers only"):
        # (the spec's model refuses a name; the fault itself still checks what it is given)
        unchecked = RollingRestart.model_construct(brokers=["zookeeper"])
        RollingRestartFault(cast(Operable, UnderReplicated(mode="zookeeper")), None, unchecked)
