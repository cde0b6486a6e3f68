"""Reassignment without Kafka: the replication-factor plan (pure), waiting for a reassignment
to complete, what the reassign and add-partitions faults check and record, how the
reassignment tool's output is read, and the spec rule for partitions a cell adds."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest

from harness.cluster import operations
from harness.common import waiting
from harness.errors import FaultError, HarnessError, WaitTimeout
from harness.faults import reassignment
from harness.faults.add_partitions import AddPartitions, AddPartitionsFault
from harness.faults.control import Node, PartitionState
from harness.faults.reassign import Reassign, ReassignFault
from harness.faults.reassignment import plan_replication_factor, reassign_and_wait
from harness.spec import expand_cells, load_spec
from tests.unit.fakes import FakeCluster, FakeNode
from tests.unit.test_spec import errors_of, write


def state(p: int, replicas: Sequence[int], isr: Sequence[int] | None = None) -> PartitionState:
    """A partition led by its first replica (None when it has none)."""
    leader = replicas[0] if replicas else None
    return PartitionState(p, leader, tuple(replicas), tuple(replicas if isr is None else isr))


# --- plan_replication_factor ----------------------------------------------------------------
def test_rf1_to_rf3_keeps_the_leader_first_and_gives_every_partition_every_broker() -> None:
    states = {p: state(p, [p % 3 + 1]) for p in range(6)}
    moves = plan_replication_factor(states, [1, 2, 3], 3)
    assert sorted(moves) == list(range(6))
    for p, replicas in moves.items():
        assert replicas[0] == p % 3 + 1 and sorted(replicas) == [1, 2, 3]


def test_added_replicas_go_to_the_least_loaded_brokers_in_turn() -> None:
    # Broker 1 holds every replica; 4 and 5 hold none: they are filled first, alternately.
    states = {p: state(p, [1]) for p in range(4)}
    moves = plan_replication_factor(states, [1, 2, 3, 4, 5], 2)
    assert moves == {0: (1, 2), 1: (1, 3), 2: (1, 4), 3: (1, 5)}
    load = Counter(b for r in moves.values() for b in r)
    assert load == {1: 4, 2: 1, 3: 1, 4: 1, 5: 1}


def test_a_plan_is_the_same_for_the_same_input() -> None:
    states = {p: state(p, [(p * 7) % 4 + 1]) for p in range(20)}
    first = plan_replication_factor(states, [4, 2, 3, 1], 3)
    assert first == plan_replication_factor(dict(reversed(states.items())), [1, 2, 3, 4], 3)


def test_the_current_leader_stays_first_even_when_it_is_not_the_first_replica() -> None:
    states = {0: PartitionState(0, 2, (1, 2), (1, 2))}
    assert plan_replication_factor(states, [1, 2, 3], 3) == {0: (2, 1, 3)}


def test_lowering_drops_a_replica_out_of_the_isr_before_an_in_sync_one() -> None:
    states = {0: state(0, [1, 2, 3], isr=[1, 3])}
    assert plan_replication_factor(states, [1, 2, 3], 2) == {0: (1, 3)}


def test_lowering_drops_the_most_loaded_follower_and_never_the_leader() -> None:
    states = {
        0: state(0, [1, 2, 3]),
        1: state(1, [2, 3]),  # already RF2: left out, but its replicas count as load
    }
    assert plan_replication_factor(states, [1, 2, 3], 2) == {0: (1, 2)}
    assert plan_replication_factor(states, [1, 2, 3], 1) == {0: (1,), 1: (2,)}


def test_partitions_already_at_the_factor_are_left_out() -> None:
    states = {0: state(0, [1, 2]), 1: state(1, [3])}
    assert plan_replication_factor(states, [1, 2, 3], 2) == {1: (3, 1)}


def test_more_replicas_than_running_brokers_is_refused() -> None:
    with pytest.raises(
        FaultError, match=r"replication factor 3 needs 3 running brokers; running: \[1, 2\]"
    ):
        plan_replication_factor({0: state(0, [1])}, [2, 1], 3)


# --- reassign_and_wait and the faults, against a fake cluster -------------------------------
@dataclass
class OpsCluster(FakeCluster):
    """FakeCluster plus the Operable methods: a reassignment shows in the metadata after
    `lag` looks, and the controller lists it as running for `finishing` more asks."""

    topics: dict[str, dict[int, PartitionState]] = field(default_factory=dict)
    lag: int = 2
    finishing: int = 0
    started: list[tuple[str, dict[int, tuple[int, ...]]]] = field(default_factory=list)
    pending: dict[tuple[str, int], tuple[int, ...]] = field(default_factory=dict)
    looks: int = 0
    lists: int = 0

    def topic_names(self) -> list[str]:
        return sorted(self.topics)

    def partition_states(self, topic: str) -> dict[int, PartitionState]:
        self.looks += 1
        if self.looks > self.lag:
            for (t, p), target in list(self.pending.items()):
                if t == topic:
                    self.topics[t][p] = state(p, target)
                    del self.pending[(t, p)]
        return dict(self.topics[topic])

    def reassign(self, topic: str, moves: Mapping[int, Sequence[int]]) -> None:
        self.started.append((topic, {p: tuple(r) for p, r in moves.items()}))
        self.pending.update({(topic, p): tuple(r) for p, r in moves.items()})
        self.looks = 0

    def reassignments_in_progress(self) -> set[tuple[str, int]]:
        self.lists += 1
        if self.finishing > 0:
            self.finishing -= 1
            return {(t, p) for t, parts in self.topics.items() for p in parts}
        return set(self.pending)

    def add_partitions(self, topic: str, total: int) -> None:
        parts = self.topics[topic]
        for p in range(len(parts), total):
            parts[p] = state(p, [1])

    def wait_all_led(self, topic: str, partitions: int, timeout_s: float) -> None:
        assert len(self.topics[topic]) >= partitions

    def spare_ids(self) -> list[int]:
        return []

    def add_broker(self, broker_id: int) -> FakeNode:
        raise NotImplementedError

    def retire(self, broker_id: int) -> None:
        raise NotImplementedError

    def under_replicated(self) -> list[tuple[str, int]]:
        return []


@pytest.fixture(autouse=True)
def virtual_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """reassign_and_wait polls every second on a clock that moves only when it sleeps: the
    fakes count looks, not seconds, so real pauses only made these tests slow."""
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    timed = functools.partial(waiting.wait_until, clock=lambda: now[0], sleep=sleep)
    monkeypatch.setattr(reassignment, "wait_until", timed)


def cluster() -> OpsCluster:
    return OpsCluster(topics={"chaos": {p: state(p, [p + 1, (p + 1) % 3 + 1]) for p in range(3)}})


def heal_event(c: OpsCluster) -> dict[str, Any]:
    kinds = [e.kind for e in c.history.events]
    assert kinds == ["fault.inject", "fault.heal"]
    return dict(c.history.events[-1].fields)


def test_reassign_and_wait_returns_once_metadata_shows_the_targets() -> None:
    c = cluster()
    done = reassign_and_wait(c, "chaos", {0: [3, 1], 1: [2, 3]}, timeout_s=10)
    assert c.started == [("chaos", {0: (3, 1)})]  # partition 1 is already there: left alone
    assert done == {"moved": 1, "before": {"0": [1, 2]}, "after": {"0": [3, 1]}}
    assert c.partition_states("chaos")[0].replicas == (3, 1)


def test_the_controller_is_asked_only_when_the_metadata_cannot_tell() -> None:
    c = cluster()
    c.finishing = 2
    reassign_and_wait(c, "chaos", {0: [3, 1]}, timeout_s=10)  # 2 leaves: done once gone
    assert c.lists == 0
    done = reassign_and_wait(c, "chaos", {1: [2, 3, 1]}, timeout_s=10)  # only adds 1
    assert c.lists == 3 and done["after"] == {"1": [2, 3, 1]}


def test_reassign_and_wait_names_what_is_missing_when_time_runs_out() -> None:
    c = cluster()
    c.lag = 10**6
    with pytest.raises(WaitTimeout, match=r"replicas \[1, 2\], target \[3, 1\]"):
        reassign_and_wait(c, "chaos", {0: [3, 1]}, timeout_s=0)


def test_reassign_one_partition_records_before_and_after() -> None:
    c = cluster()
    ReassignFault(c, "chaos/2", Reassign.of(to=[1, 2])).inject()
    fields = heal_event(c)
    assert fields["target"] == "chaos/2" and fields["to"] == [1, 2]
    assert fields["topic"] == "chaos" and fields["moved"] == 1 and fields["completed"] is True
    assert fields["before"] == {"2": [3, 1]} and fields["after"] == {"2": [1, 2]}


def test_reassign_a_topic_to_a_replication_factor() -> None:
    c = cluster()
    ReassignFault(c, "chaos", Reassign.of(replication_factor=3)).inject()
    fields = heal_event(c)
    assert fields["moved"] == 3 and fields["completed"] is True
    assert all(sorted(r) == [1, 2, 3] for r in fields["after"].values())


@pytest.mark.parametrize(
    ("target", "options", "error"),
    [
        ("nope/0", Reassign.of(to=[1, 2]), "no topic 'nope' in the cluster"),
        ("chaos/7", Reassign.of(to=[1, 2]), r"topic 'chaos' has no partition 7 \(it has 3\)"),
        ("chaos/0", Reassign.of(to=[1, 4]), r"broker\(s\) \[4\] that are not running"),
        ("chaos", Reassign.of(to=[1, 2]), "to moves one partition"),
        ("chaos/0", Reassign.of(replication_factor=2), "applies to a whole topic"),
        ("chaos", Reassign.of(replication_factor=4), "needs 4 running brokers"),
    ],
)
def test_reassign_checks_at_fire_time_and_records_the_failure(
    target: str, options: Reassign, error: str
) -> None:
    c = cluster()
    with pytest.raises(FaultError, match=error):
        ReassignFault(c, target, options).inject()
    fields = heal_event(c)
    assert fields["completed"] is False and c.started == []


def test_add_partitions_grows_the_topic_and_records_the_counts() -> None:
    c = cluster()
    AddPartitionsFault(c, "chaos", AddPartitions.of(count=5)).inject()
    fields = heal_event(c)
    assert (fields["before"], fields["after"], fields["completed"]) == (3, 5, True)
    assert sorted(c.topics["chaos"]) == list(range(5))


def test_add_partitions_refuses_to_shrink() -> None:
    c = cluster()
    with pytest.raises(FaultError, match="has 3 partitions; count must be more"):
        AddPartitionsFault(c, "chaos", AddPartitions.of(count=3)).inject()
    assert heal_event(c)["completed"] is False


# --- the spec: a partition that add-partitions creates may be a target ----------------------
def fault(faults: str, topic: str) -> str:
    return f"name: ops\nproducer: {{records: 100}}\ntopic: {topic}\nfaults: [{faults}]\n"


def test_a_partition_added_by_the_cell_may_be_reassigned(tmp_path: Path) -> None:
    grown = (
        "{at_s: 1, kind: add-partitions, count: 8}, "
        "{at_s: 20, kind: reassign, target: chaos/7, to: [1, 2]}"
    )
    [cell] = expand_cells(load_spec(write(tmp_path, fault(grown, topic="{partitions: 6}"))))
    assert [f.kind for f in cell.spec.faults] == ["add-partitions", "reassign"]
    beyond = grown.replace("chaos/7", "chaos/8")
    assert errors_of(tmp_path, fault(beyond, topic="{partitions: 6}")) == [
        "faults[1].target: expected a partition below topic.partitions "
        "(8 once add-partitions ran) (got 8)"
    ]


# --- the reassignment tool in a broker container (harness.cluster.operations) ---------------
class ToolNode:
    """A broker container whose tool run answers `reply`; `dies` takes the container down."""

    def __init__(self, name: str, reply: tuple[int, str], dies: bool = False) -> None:
        self.name, self.reply, self.dies, self.up = name, reply, dies, True
        self.runs: list[tuple[str, ...]] = []

    def exec(self, *argv: str) -> tuple[int, str]:
        self.runs.append(argv)
        if argv[0] == "sh":
            return 0, ""
        if self.dies:
            self.up = False
        return self.reply

    def is_up(self) -> bool:
        return self.up


LISTED = """log4j:WARN No appenders could be found for logger.
Current partition reassignments:
my-topic.v2-0: replicas: 1,2,3. adding: 1,2. removing: 3.
__consumer_offsets-17: replicas: 3,1,2. adding: 1,2. removing: .
"""


def run_tool(nodes: list[ToolNode], args: list[str]) -> str:
    return operations._run_tool(cast(list[Node], nodes), "the tool", args)


def test_the_list_names_topics_with_dashes_and_dots() -> None:
    out = run_tool([ToolNode("broker-1", (0, LISTED))], ["--list"])
    found = {(m["topic"], int(m["partition"])) for m in operations._IN_PROGRESS.finditer(out)}
    assert found == {("my-topic.v2", 0), ("__consumer_offsets", 17)}
    assert not list(operations._IN_PROGRESS.finditer("No partition reassignments found.\n"))


def test_a_container_killed_under_the_tool_hands_over_to_the_next_broker() -> None:
    killed = ToolNode("broker-1", (137, "Current partition replica assignment\n{...}"), dies=True)
    nodes = [killed, ToolNode("broker-2", (0, "Successfully started"))]
    assert run_tool(nodes, ["--execute"]) == "Successfully started"


def test_a_refused_reassignment_raises_at_once_with_the_tool_s_words() -> None:
    refused = (
        1,
        'log4j:WARN x\n{"version":1}\nError reassigning partition(s):\nt-0: Unknown broker 9\n',
    )
    second = ToolNode("broker-2", (0, ""))
    with pytest.raises(
        HarnessError, match=r"exit 1: Error reassigning partition\(s\): \| t-0: Unknown broker 9"
    ):
        run_tool([ToolNode("broker-1", refused), second], ["--execute"])
    assert second.runs == []
