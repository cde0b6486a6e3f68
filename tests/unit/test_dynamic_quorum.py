"""A dynamic KRaft quorum (KIP-853) without Docker: the wiring and format arguments each node
gets, the spec's rules for cluster.dynamic_quorum / spare_controllers and the two operation
kinds, what add-controller and remove-controller do through a fake quorum, and the quorum
check's figure from a history."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from harness import ConfigError, KafkaCluster
from harness.errors import FaultError, HarnessError
from harness.faults.add_controller import AddController, AddControllerFault
from harness.faults.control import QuorumControl
from harness.faults.kill import KillFault
from harness.faults.remove_controller import RemoveController, RemoveControllerFault
from harness.nodes.dynamic_quorum import (
    NODE_PROPERTIES,
    QuorumStatus,
    directory_id,
    format_args,
    parse_status,
)
from harness.nodes.topology import kafka_properties, plan_nodes, plan_spare_controllers
from harness.results.history import History
from harness.runner.settle import record_quorum
from harness.spec import expand_cells, load_spec
from spark_jobs.checks import quorum as quorum_check
from spark_jobs.context import CellContext
from tests.unit.fakes import FakeCluster, FakeNode
from tests.unit.test_spec import errors_of, write
from tests.unit.test_topology import props

CLUSTER_ID = "q1w2e3r4t5y6u7i8o9p0aA"


# --- wiring ------------------------------------------------------------------------------------
def test_a_dynamic_quorum_is_found_through_bootstrap_servers_not_fixed_voters() -> None:
    nodes = plan_nodes("kraft", 2, 3, [41001, 41002])
    controller = props(kafka_properties("kraft", nodes[0], nodes, {}, dynamic_quorum=True))
    broker = props(kafka_properties("kraft", nodes[3], nodes, {}, dynamic_quorum=True))
    bootstrap = "controller-101:9093,controller-102:9093,controller-103:9093"
    for p in (controller, broker):
        assert p["controller.quorum.bootstrap.servers"] == bootstrap
        assert "controller.quorum.voters" not in p
    # A controller announces its own name: the voter set records that endpoint.
    assert controller["listeners"] == "CONTROLLER://controller-101:9093"
    assert broker["listeners"] == "INTERNAL://:9092,EXTERNAL://:41001"


def test_a_static_quorum_is_wired_as_before() -> None:
    nodes = plan_nodes("kraft", 2, 3, [41001, 41002])
    controller = props(kafka_properties("kraft", nodes[0], nodes, {}))
    assert controller["controller.quorum.voters"] == (
        "101@controller-101:9093,102@controller-102:9093,103@controller-103:9093"
    )
    assert "controller.quorum.bootstrap.servers" not in controller
    assert controller["listeners"] == "CONTROLLER://:9093"


def test_spare_controllers_come_after_the_controllers_and_find_the_initial_voters() -> None:
    nodes = plan_nodes("kraft", 3, 3, [41001, 41002, 41003])
    spares = plan_spare_controllers(3, 2)
    assert [(s.name, s.node_id, s.role, s.host_port) for s in spares] == [
        ("controller-104", 104, "controller", None),
        ("controller-105", 105, "controller", None),
    ]
    p = props(kafka_properties("kraft", spares[0], nodes, {}, dynamic_quorum=True))
    assert p["process.roles"] == "controller" and p["node.id"] == "104"
    assert p["controller.quorum.bootstrap.servers"].split(",") == [
        "controller-101:9093",
        "controller-102:9093",
        "controller-103:9093",
    ]


# --- format arguments --------------------------------------------------------------------------
def test_the_initial_controllers_are_formatted_with_the_voter_set_and_the_rest_with_none() -> None:
    nodes = plan_nodes("kraft", 2, 3, [41001, 41002])
    voters = [n for n in nodes if n.is_controller]
    spare = plan_spare_controllers(3, 1)[0]
    d = {i: directory_id(CLUSTER_ID, i) for i in (101, 102, 103)}
    expected = (
        f"--initial-controllers 101@controller-101:9093:{d[101]},"
        f"102@controller-102:9093:{d[102]},103@controller-103:9093:{d[103]}"
    )
    # The same value on every initial controller, as Kafka's guide requires.
    assert {format_args(v, voters, CLUSTER_ID) for v in voters} == {expected}
    assert format_args(nodes[3], voters, CLUSTER_ID) == "--no-initial-controllers"
    assert format_args(spare, voters, CLUSTER_ID) == "--no-initial-controllers"


def test_directory_ids_repeat_per_cluster_and_node_and_read_as_kafka_uuids() -> None:
    ids = {
        (c, n): directory_id(c, n)
        for c in (CLUSTER_ID, "other-cluster-id-abcdef")
        for n in (101, 102)
    }
    assert len(set(ids.values())) == 4  # one per cluster and node
    assert directory_id(CLUSTER_ID, 101) == ids[(CLUSTER_ID, 101)]  # the same every time
    for text in ids.values():
        assert len(text) == 22 and not text.startswith("-")
        assert len(base64.urlsafe_b64decode(text + "==")) == 16


def test_no_directory_id_starts_with_a_dash_an_argument_parser_would_take_for_an_option() -> None:
    assert not any(directory_id(f"c{i}", 101).startswith("-") for i in range(500))


# --- the cluster's shape -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"mode": "zookeeper", "dynamic_quorum": True},
            "dynamic_quorum: a controller quorum exists only in mode kraft",
        ),
        (
            {"version": "3.8.1", "controllers": 3, "dynamic_quorum": True},
            r"dynamic_quorum: a dynamic controller quorum \(KIP-853, kraft.version 1\) needs "
            r"Kafka 3.9 or newer \(got 3.8.1\)",
        ),
        ({"dynamic_quorum": True}, r"dynamic_quorum: expected dedicated controllers"),
        (
            {"controllers": 3, "spare_controllers": 1},
            "spare_controllers: expected 0 without dynamic_quorum",
        ),
        (
            {"controllers": 3, "dynamic_quorum": True, "spare_controllers": 3},
            r"spare_controllers: expected controllers \+ spare_controllers <= 5 \(got 3 \+ 3\)",
        ),
    ],
)
def test_a_cluster_that_cannot_have_its_quorum_says_which_key(
    kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        KafkaCluster(**kwargs)  # type: ignore[arg-type]


def test_a_dynamic_cluster_plans_its_spare_controllers() -> None:
    cluster = KafkaCluster(controllers=3, dynamic_quorum=True, spare_controllers=2)
    cluster._plan()
    assert cluster.spare_controller_ids() == [104, 105]
    assert cluster.spare_ids() == []


def test_a_spare_asked_of_a_cluster_not_running_stays_a_spare() -> None:
    """A call outside `with` says so and leaves the spare listed (it used to drop a broker's)."""
    cluster = KafkaCluster(
        brokers=3, spare_brokers=1, controllers=3, dynamic_quorum=True, spare_controllers=1
    )
    cluster._plan()
    broker, controller = cluster.spare_ids()[0], cluster.spare_controller_ids()[0]
    with pytest.raises(HarnessError, match="not running"):
        cluster.add_broker(broker)
    with pytest.raises(HarnessError, match="not running"):
        cluster.start_spare_controller(controller)
    assert (cluster.spare_ids(), cluster.spare_controller_ids()) == ([broker], [controller])


# --- the spec ----------------------------------------------------------------------------------
BASE = "name: q\nproducer: {records: 100}\n"
DYNAMIC = "{controllers: 3, dynamic_quorum: true, spare_controllers: 1}"


def spec_text(faults: str, cluster: str = DYNAMIC) -> str:
    return f"{BASE}cluster: {cluster}\nfaults: [{faults}]\n"


REPLACE = (
    "{at_s: 5, kind: kill, target: 'broker:101'}, {at_s: 10, kind: add-controller}, "
    "{at_s: 20, kind: remove-controller, target: 'broker:101'}"
)


def test_a_replacement_plan_loads_with_its_options(tmp_path: Path) -> None:
    text = spec_text(
        REPLACE.replace("add-controller}", "add-controller, target: 'broker:104', timeout_s: 90}")
    )
    [cell] = expand_cells(load_spec(write(tmp_path, text)))
    assert [f.kind for f in cell.spec.faults] == ["kill", "add-controller", "remove-controller"]
    assert cell.spec.cluster.dynamic_quorum and cell.spec.cluster.spare_controllers == 1
    assert cell.spec.faults[1].given() == {"timeout_s": 90}
    keep = spec_text("{at_s: 1, kind: remove-controller, target: controller, keep_running: true}")
    [cell] = expand_cells(load_spec(write(tmp_path, keep, "keep.yaml")))
    assert cell.spec.faults[0].given() == {"keep_running": True}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            spec_text("{at_s: 1, kind: add-controller}", "{controllers: 3}"),
            "faults[0].kind: add-controller needs cluster.dynamic_quorum: true",
        ),
        (
            spec_text("{at_s: 1, kind: add-controller}", "{controllers: 3, dynamic_quorum: true}"),
            "faults[0].target: add-controller needs cluster.spare_controllers >= 1",
        ),
        (
            spec_text("{at_s: 1, kind: add-controller, target: 'broker:103'}"),
            "faults[0].target: expected a spare controller (broker:104) or no target for the "
            "next one (got 'broker:103')",
        ),
        (
            spec_text("{at_s: 1, kind: add-controller}, {at_s: 2, kind: add-controller}"),
            "faults[1].kind: no spare controller left for this add-controller: 2 planned by "
            "at_s 2, cluster.spare_controllers is 1",
        ),
        (
            spec_text("{at_s: 1, kind: add-controller, duration_s: 5}"),
            "faults[0].duration_s: add-controller takes no duration",
        ),
        (
            spec_text(
                "{at_s: 1, kind: remove-controller, target: 'broker:101'}", "{controllers: 3}"
            ),
            "faults[0].kind: remove-controller needs cluster.dynamic_quorum: true",
        ),
        (
            spec_text("{at_s: 1, kind: remove-controller}"),
            "faults[0].target: expected controller (the active one) or a controller (broker:101, "
            "broker:102, broker:103, broker:104) (got 'random')",
        ),
        (
            spec_text("{at_s: 1, kind: remove-controller, target: 'broker:1'}"),
            "faults[0].target: expected controller (the active one) or a controller",
        ),
        (
            spec_text(
                "{at_s: 1, kind: remove-controller, target: 'broker:101'}, "
                "{at_s: 2, kind: remove-controller, target: controller}",
                "{controllers: 2, dynamic_quorum: true}",
            ),
            "faults[1].kind: the quorum would have no voter left after this remove-controller",
        ),
        (
            spec_text("{at_s: 1, kind: remove-controller, target: controller, wipe: true}"),
            "faults[0].wipe: remove-controller takes no wipe (it takes: keep_running, timeout_s)",
        ),
        (
            spec_text("{at_s: 1, kind: kill, target: 'broker:101'}", "{dynamic_quorum: true}"),
            "cluster.dynamic_quorum: expected dedicated controllers (cluster.controllers >= 1)",
        ),
        (
            spec_text(
                "{at_s: 1, kind: kill, target: 'broker:101'}",
                "{version: 3.8.1, controllers: 3, dynamic_quorum: true}",
            ),
            "cluster.dynamic_quorum: a dynamic controller quorum (KIP-853, kraft.version 1) "
            "needs Kafka 3.9 or newer (got 3.8.1)",
        ),
        (
            spec_text("{at_s: 1, kind: kill, target: 'broker:1'}", "{spare_controllers: 1}"),
            "cluster.spare_controllers: expected 0 without dynamic_quorum",
        ),
    ],
)
def test_every_mistake_names_its_key(tmp_path: Path, text: str, expected: str) -> None:
    lines = errors_of(tmp_path, text)
    assert any(line.startswith(expected) for line in lines), lines


def test_an_add_before_the_removes_keeps_the_quorum_alive(tmp_path: Path) -> None:
    text = spec_text(
        "{at_s: 1, kind: add-controller}, {at_s: 2, kind: remove-controller, target: 'broker:101'}, "
        "{at_s: 3, kind: remove-controller, target: 'broker:102'}",
        "{controllers: 2, dynamic_quorum: true, spare_controllers: 1}",
    )
    [cell] = expand_cells(load_spec(write(tmp_path, text)))
    assert [f.kind for f in cell.spec.faults].count("remove-controller") == 2


# --- describe --status -------------------------------------------------------------------------
STATUS = """log4j:WARN No appenders could be found for logger (org.apache.kafka).
ClusterId:              q1w2e3r4t5y6u7i8o9p0aA
LeaderId:               102
LeaderEpoch:            7
HighWatermark:          812
MaxFollowerLag:         0
MaxFollowerLagTimeMs:   0
CurrentVoters:          [{"id": 102, "directoryId": "b-DwmhtOheTqZzPoh52kfA", "endpoints": ["CONTROLLER://controller-102:9093"]}, {"id": 103, "directoryId": "g42deArWBTRM5A1yuVpMCg", "endpoints": ["CONTROLLER://controller-103:9093"]},
                         {"id": 104, "directoryId": "ILZ5MPTeRWakmJu99uBJCA", "endpoints": ["CONTROLLER://controller-104:9093"]}]
CurrentObservers:       [{"id": 1, "directoryId": "3Db5QLSqSZieL3rJBUUegA"}, {"id": 2, "directoryId": "UegA3Db5QLSqSZieL3rJBU"}]
"""


def test_the_status_is_read_as_leader_voters_with_directories_and_observers() -> None:
    status = parse_status(STATUS)
    assert status == QuorumStatus(
        leader=102,
        voters={
            102: "b-DwmhtOheTqZzPoh52kfA",
            103: "g42deArWBTRM5A1yuVpMCg",
            104: "ILZ5MPTeRWakmJu99uBJCA",
        },
        observers=(1, 2),
    )
    assert status.voter_ids == [102, 103, 104]
    static = parse_status("LeaderId: 1\nCurrentVoters: [1,2,3]\nCurrentObservers: []\n")
    assert static == QuorumStatus(leader=1, voters={1: "", 2: "", 3: ""}, observers=())


@pytest.mark.parametrize(
    "text",
    [
        "Error while executing: org.apache.kafka.common.errors.TimeoutException\n",
        'LeaderId: 1\nCurrentVoters: [{"id": 1, "directoryId"\n',  # cut short
        "LeaderId: 1\nCurrentVoters: []\n",
    ],
)
def test_a_status_without_voters_is_no_answer(text: str) -> None:
    assert parse_status(text) is None


# --- the operations, on a fake quorum ----------------------------------------------------------
class QuorumNode(FakeNode):
    """A controller whose MetadataQuorumCommand changes the fake quorum's voters."""

    def exec(self, *argv: str) -> tuple[int, str]:
        self.commands.append(argv)
        quorum = cast(FakeQuorum, self.cluster)
        if "add-controller" in argv:
            assert self.node_id is not None
            if quorum.refuse_adds:
                quorum.refuse_adds -= 1
                return 1, "org.apache.kafka.common.errors.TimeoutException: not caught up"
            quorum.voters[self.node_id] = directory_id(CLUSTER_ID, self.node_id) + "x"
            return 0, "Added controller"
        if "remove-controller" in argv:
            gone = int(argv[argv.index("--controller-id") + 1])
            assert argv[argv.index("--controller-directory-id") + 1] == quorum.voters[gone]
            del quorum.voters[gone]
            return 0, "Removed controller"
        return super().exec(*argv)


@dataclass
class FakeQuorum(FakeCluster):
    dynamic_quorum: bool = True
    spares: list[int] = field(default_factory=lambda: [104])
    voters: dict[int, str] = field(default_factory=dict)
    refuse_adds: int = 0
    retired: list[tuple[int, bool]] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__post_init__()
        for n in self.nodes:
            n.is_controller = False  # brokers only
        for i in (101, 102, 103):
            self.nodes.append(QuorumNode(self, f"controller-{i}", i, "controller"))
            self.voters[i] = directory_id(CLUSTER_ID, i)

    def spare_controller_ids(self) -> list[int]:
        return sorted(self.spares)

    def start_spare_controller(self, node_id: int) -> QuorumNode:
        self.spares.remove(node_id)
        node = QuorumNode(self, f"controller-{node_id}", node_id, "controller")
        self.nodes.append(node)
        return node

    def quorum_status(self, timeout_s: float = 60) -> QuorumStatus:
        return QuorumStatus(leader=min(self.voters), voters=dict(self.voters))

    def retire_controller(self, node_id: int, stop: bool = True) -> None:
        self.retired.append((node_id, stop))
        node = self.node(node_id)
        self.nodes.remove(node)
        if stop:
            node.state = "exited"


def quorum_of(fake: FakeQuorum) -> QuorumControl:
    return cast(QuorumControl, fake)


def test_add_controller_starts_the_next_spare_and_runs_kafkas_tool_inside_it() -> None:
    fake = FakeQuorum(refuse_adds=1)  # the first try comes before it caught up
    fault = AddControllerFault(quorum_of(fake), None, AddController.of(timeout_s=30))
    fault.inject()
    new = fake.node(104)
    adds = [c for c in new.commands if "add-controller" in c]
    assert len(adds) == 2  # tried again until Kafka took it
    cmd = adds[-1]
    assert cmd[cmd.index("--command-config") + 1] == NODE_PROPERTIES
    assert cmd[cmd.index("--bootstrap-controller") + 1] == (
        "controller-101:9093,controller-102:9093,controller-103:9093"
    )
    assert fault.outcome["voters_before"] == [101, 102, 103]
    assert fault.outcome["voters_after"] == [101, 102, 103, 104]
    assert fault.outcome["controller"] == 104 and fault.outcome["joined"] is True
    assert fault.outcome["completed"] is True
    heal = [e.fields for e in fake.history.events if e.kind == "fault.heal"][-1]
    assert heal["fault"] == "add-controller" and heal["target"] == "controller-104"
    assert heal["voters_after"] == [101, 102, 103, 104]


def test_add_controller_without_a_spare_left_is_an_error_not_a_start() -> None:
    fake = FakeQuorum(spares=[])
    with pytest.raises(FaultError, match="not a spare controller left to start"):
        AddControllerFault(quorum_of(fake), None, AddController.of()).inject()
    assert [n.name for n in fake.nodes if n.is_controller] == [
        "controller-101",
        "controller-102",
        "controller-103",
    ]


def test_remove_controller_names_the_voters_directory_and_retires_the_node() -> None:
    fake = FakeQuorum()
    fake.node(101).state = "exited"  # dead: the tool runs in another controller
    fault = RemoveControllerFault(quorum_of(fake), 101, RemoveController.of(target="broker:101"))
    fault.inject()
    runner = fake.node(102)
    [cmd] = [c for c in runner.commands if "remove-controller" in c]
    assert cmd[cmd.index("--controller-directory-id") + 1] == directory_id(CLUSTER_ID, 101)
    assert cmd[cmd.index("--bootstrap-controller") + 1] == "controller-102:9093,controller-103:9093"
    assert fault.outcome["voters_before"] == [101, 102, 103]
    assert fault.outcome["voters_after"] == [102, 103]
    assert fault.outcome["removed"] is True and fault.outcome["stopped"] is True
    assert fake.retired == [(101, True)]


def test_remove_controller_keep_running_leaves_the_node_up() -> None:
    fake = FakeQuorum()
    spec = RemoveController.of(target="broker:103", keep_running=True)
    fault = RemoveControllerFault(quorum_of(fake), 103, spec)
    fault.inject()
    assert fake.retired == [(103, False)] and fault.outcome["stopped"] is False


def test_remove_controller_refuses_the_last_voter_and_a_non_voter() -> None:
    fake = FakeQuorum()
    fake.voters = {101: directory_id(CLUSTER_ID, 101)}
    with pytest.raises(FaultError, match="controller-101 is the last voter"):
        RemoveControllerFault(quorum_of(fake), 101, RemoveController.of()).inject()
    with pytest.raises(FaultError, match=r"controller-102 is no voter \(voters: \[101\]\)"):
        RemoveControllerFault(quorum_of(fake), 102, RemoveController.of()).inject()
    assert fake.retired == []


def test_a_static_cluster_refuses_both_operations() -> None:
    fake = FakeQuorum(dynamic_quorum=False)
    with pytest.raises(FaultError, match=r"needs cluster\.dynamic_quorum: true"):
        AddControllerFault(quorum_of(fake), None, AddController.of()).inject()
    with pytest.raises(FaultError, match=r"needs cluster\.dynamic_quorum: true"):
        RemoveControllerFault(quorum_of(fake), 101, RemoveController.of()).inject()


def test_an_abandoned_kill_closes_its_window_without_starting_the_node() -> None:
    fake = FakeCluster()
    kill = KillFault(fake, 2).inject()
    kill.abandon("broker-2 removed")
    assert fake.node(2).state == "exited"  # not started again
    assert list(fake.faults) == [] and not kill.active
    heal = fake.history.events[-1]
    assert heal.kind == "fault.heal" and heal.fields["abandoned"] == "broker-2 removed"
    kill.heal()  # nothing: it is closed
    assert fake.node(2).state == "exited"


# --- the quorum check --------------------------------------------------------------------------
def history(*extra: dict[str, object]) -> list[dict[str, object]]:
    start = {
        "kind": "cluster.start",
        "quorum": {"dynamic": True, "voters": [101, 102, 103], "spare_controllers": [104]},
    }
    return [start, *extra]


ADDED = {"kind": "fault.heal", "fault": "add-controller", "controller": 104, "joined": True}
REMOVED = {"kind": "fault.heal", "fault": "remove-controller", "controller": 101, "removed": True}


def check(events: list[dict[str, object]]) -> dict[str, object]:
    ctx = SimpleNamespace(data=SimpleNamespace(history=events))
    return dict(quorum_check.run(cast(CellContext, ctx)))


def test_the_final_voters_are_held_to_the_completed_changes() -> None:
    final = {"kind": "quorum.status", "leader": 102, "voters": [102, 103, 104]}
    out = check(history(ADDED, REMOVED, final))
    assert out["voters_unexpected"] == 0
    assert out["quorum"] == {
        "initial": [101, 102, 103],
        "expected": [102, 103, 104],
        "final": [102, 103, 104],
        "leader": 102,
    }
    # The dead controller still listed: one voter in one set only.
    stale = {"kind": "quorum.status", "leader": 102, "voters": [101, 102, 103, 104]}
    assert check(history(ADDED, REMOVED, stale))["voters_unexpected"] == 1
    # A remove that failed changes nothing expected.
    failed = {**REMOVED, "removed": False}
    assert check(history(ADDED, failed, stale))["voters_unexpected"] == 0


def test_no_final_status_leaves_the_figure_undecided_and_a_static_cell_has_none() -> None:
    out = check(history(ADDED, {"kind": "quorum.status", "error": "no controller answered"}))
    assert out["voters_unexpected"] is None
    assert out["undecided"] == {
        "voters_unexpected": "the final quorum status was not read: no controller answered"
    }
    assert check([{"kind": "cluster.start", "nodes": ["broker-1"]}]) == {}


# --- the recovery's record of the quorum -------------------------------------------------------
class StatusOf:
    """A cluster as record_quorum reads it: a dynamic quorum, and its answer (or error)."""

    def __init__(self, answer: QuorumStatus | Exception, dynamic: bool = True) -> None:
        self.dynamic_quorum = dynamic
        self.answer = answer

    def quorum_status(self, timeout_s: float = 60) -> QuorumStatus:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def recorded(cluster: StatusOf) -> list[tuple[str, dict[str, object]]]:
    history = History()
    record_quorum(cast(KafkaCluster, cluster), history, timeout_s=0)
    return [(e.kind, e.fields) for e in history.events]


def test_the_recovery_records_what_describe_status_said() -> None:
    status = QuorumStatus(leader=103, voters={102: "b", 103: "c", 104: "d"}, observers=(1,))
    assert recorded(StatusOf(status)) == [
        (
            "quorum.status",
            {
                "leader": 103,
                "voters": [102, 103, 104],
                "directory_ids": {"102": "b", "103": "c", "104": "d"},
                "observers": [1],
            },
        )
    ]
    failed = recorded(StatusOf(HarnessError("no running controller described the quorum")))
    assert failed == [("quorum.status", {"error": "no running controller described the quorum"})]
    assert recorded(StatusOf(status, dynamic=False)) == []  # a static quorum: nothing
