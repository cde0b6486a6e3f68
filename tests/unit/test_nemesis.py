"""The nemesis against fake nodes and a virtual clock: when faults fire and heal, who waits
for whom, and what a fault that cannot be done leaves in the history. No Docker."""

from __future__ import annotations

import threading

from harness.faults import healing
from harness.nemesis.nemesis import Nemesis
from tests.unit.fakes import FakeCluster, FakeConsumers, Planned, wait_for


def nemesis_for(cluster: FakeCluster, *plan: Planned) -> tuple[Nemesis, FakeConsumers]:
    consumers = FakeConsumers(cluster.clock)
    nemesis = Nemesis(
        cluster, plan, consumers, cluster.history, seed=1, default_group="g", clock=cluster.clock
    )
    return nemesis, consumers


def play(cluster: FakeCluster, nemesis: Nemesis, until: float) -> None:
    nemesis.start()
    cluster.clock.play(until, lambda: nemesis.playing)


def kinds(cluster: FakeCluster) -> list[tuple[str, dict[str, object]]]:
    return [(e.kind, e.fields) for e in cluster.history.events]


def test_faults_fire_at_their_time_and_heal_after_their_duration() -> None:
    cluster = FakeCluster()
    nemesis, _ = nemesis_for(
        cluster,
        Planned(0, at_s=2, kind="kill", target="broker:1", duration_s=3),
        Planned(1, at_s=4, kind="pause", target="broker:2", duration_s=1.5),
    )
    play(cluster, nemesis, until=60)
    assert sorted(cluster.ops()) == [
        (2.0, "kill", "broker-1"),
        (4.0, "pause", "broker-2"),
        (5.0, "start", "broker-1"),
        (5.5, "unpause", "broker-2"),
    ]
    assert nemesis.done and len(cluster.faults) == 0
    injected = [f["target"] for k, f in kinds(cluster) if k == "fault.inject"]
    healed = [f["target"] for k, f in kinds(cluster) if k == "fault.heal"]
    assert injected == ["broker-1", "broker-2"] and healed == ["broker-1", "broker-2"]
    # Each inject names its place in the plan, for the verdict's on-time check.
    planned = [
        (f["index"], f["at_s"], f["late_s"]) for k, f in kinds(cluster) if k == "fault.inject"
    ]
    assert planned == [(0, 2, 0.0), (1, 4, 0.0)]
    assert [f["spec_kind"] for k, f in kinds(cluster) if k == "fault.inject"] == ["kill", "pause"]


def test_a_pause_ended_by_a_kill_of_its_node_heals_without_unpausing() -> None:
    """A role resolved when it fires can land on a paused node (explore drew `pause
    controller`, then `kill leader-of:` on the same broker): the kill ends the pause, and the
    pause's heal records the state it found instead of failing on Docker's "not paused"."""
    cluster = FakeCluster()
    nemesis, _ = nemesis_for(
        cluster,
        Planned(0, at_s=1, kind="pause", target="broker:2", duration_s=5),
        Planned(1, at_s=2, kind="kill", target="broker:2", duration_s=1),
    )
    play(cluster, nemesis, until=60)
    assert [(t, op) for t, op, _ in cluster.ops()] == [
        (1.0, "pause"),
        (2.0, "kill"),
        (3.0, "start"),
    ]
    heals = {f["fault"]: f for k, f in kinds(cluster) if k == "fault.heal"}
    assert heals["pause"]["found_at_heal"] == "running" and "found_at_heal" not in heals["kill"]
    assert not [f for k, f in kinds(cluster) if k == "fault.error"]
    assert nemesis.done and len(cluster.faults) == 0 and cluster.node(2).status() == "running"


def test_nothing_fires_before_its_time() -> None:
    cluster = FakeCluster()
    nemesis, _ = nemesis_for(cluster, Planned(0, at_s=10, kind="stop", target="broker:3"))
    play(cluster, nemesis, until=9.99)
    assert cluster.ops() == [] and nemesis.playing == 1
    cluster.clock.play(10, lambda: nemesis.playing)
    assert cluster.ops() == [(10.0, "stop", "broker-3")]


def test_a_fault_without_duration_stays_until_the_heal_phase() -> None:
    cluster = FakeCluster()
    nemesis, _ = nemesis_for(cluster, Planned(0, at_s=1, kind="kill", target="broker:2"))
    play(cluster, nemesis, until=1000)
    assert nemesis.done
    assert cluster.node(2).status() == "exited" and len(cluster.faults) == 1

    registered: list[float] = []
    healing.heal_all(cluster, registered.append)  # the runner's heal phase
    assert cluster.node(2).status() == "running" and len(cluster.faults) == 0
    assert [op for _, op, _ in cluster.ops()] == ["kill", "start"]
    assert len(registered) == 1 and kinds(cluster)[-1] == ("cluster.healed", {"errors": []})


def test_faults_on_one_node_take_turns() -> None:
    """A pause due while the kill's heal is still bringing broker-1 back waits for it."""
    cluster = FakeCluster()
    node = cluster.node(1)
    node.hold["start"] = threading.Event()
    nemesis, _ = nemesis_for(
        cluster,
        Planned(0, at_s=1, kind="kill", target="broker:1", duration_s=4),
        Planned(1, at_s=5.5, kind="pause", target="broker:1", duration_s=1),
    )
    nemesis.start()
    cluster.clock.play(4.9, lambda: nemesis.playing)
    cluster.clock.advance(5)  # the kill's heal starts the node, which takes its time
    wait_for(node.inside.is_set, "the heal inside start()")
    cluster.clock.advance(5.5)  # the pause is due now, but the node is not ready for it
    wait_for(lambda: cluster.clock.monotonic() == 5.5, "the clock")
    threading.Event().wait(0.2)
    assert [op for _, op, _ in cluster.ops()] == ["kill", "start"]

    node.hold["start"].set()
    cluster.clock.play(60, lambda: nemesis.playing)
    assert [op for _, op, _ in cluster.ops()] == ["kill", "start", "pause", "unpause"]
    assert cluster.overlaps == []
    assert node.status() == "running"


def test_faults_on_different_nodes_do_not_wait_for_each_other() -> None:
    cluster = FakeCluster()
    cluster.node(1).hold["start"] = threading.Event()
    nemesis, _ = nemesis_for(
        cluster,
        Planned(0, at_s=1, kind="kill", target="broker:1", duration_s=1),
        Planned(1, at_s=2, kind="pause", target="broker:2", duration_s=1),
    )
    nemesis.start()
    cluster.clock.advance(1)
    wait_for(lambda: len(cluster.ops()) == 1, "the kill")
    cluster.clock.advance(2)
    wait_for(lambda: ("pause", "broker-2") in [(op, n) for _, op, n in cluster.ops()], "pause")
    cluster.node(1).hold["start"].set()
    cluster.clock.play(60, lambda: nemesis.playing)
    assert cluster.node(1).is_up() and cluster.node(2).is_up()


def test_an_unresolvable_target_is_skipped_with_its_reason() -> None:
    cluster = FakeCluster(leaders_of={("t", 0): None}, coordinators={"g": None})
    nemesis, _ = nemesis_for(
        cluster,
        Planned(0, at_s=1, kind="kill", target="leader-of:t/0", duration_s=2),
        Planned(1, at_s=2, kind="stop", target="coordinator-of", duration_s=2),
        Planned(2, at_s=3, kind="pause", target="zookeeper"),  # a KRaft cluster has none
    )
    play(cluster, nemesis, until=60)
    assert cluster.ops() == [] and len(cluster.faults) == 0
    skipped = {f["index"]: f for k, f in kinds(cluster) if k == "fault.skipped"}
    assert sorted(skipped) == [0, 1, 2]
    assert skipped[0]["fault"] == "kill" and skipped[0]["target"] == "leader-of:t/0"
    assert "t/0 has no leader" in str(skipped[0]["reason"])
    assert "group 'g' has no coordinator" in str(skipped[1]["reason"])
    assert "needs mode='zookeeper'" in str(skipped[2]["reason"])
    assert not any(k.startswith(("fault.inject", "fault.error")) for k, _ in kinds(cluster))


def test_symbolic_targets_resolve_when_the_fault_fires() -> None:
    cluster = FakeCluster(leaders_of={("t", 0): 3}, coordinators={"g": 2}, controller_id=1)
    nemesis, _ = nemesis_for(
        cluster,
        Planned(0, at_s=1, kind="kill", target="leader-of:t/0", duration_s=1),
        Planned(1, at_s=1, kind="pause", target="coordinator-of", duration_s=1),
        Planned(2, at_s=1, kind="stop", target="controller", duration_s=1),
    )
    play(cluster, nemesis, until=60)
    injected = {(op, node) for t, op, node in cluster.ops() if t == 1.0}
    assert injected == {("kill", "broker-3"), ("pause", "broker-2"), ("stop", "broker-1")}


def test_an_inject_that_raises_is_a_fault_error_and_the_run_goes_on() -> None:
    cluster = FakeCluster()
    cluster.node(1).fail["kill"] = RuntimeError("docker said no")
    nemesis, _ = nemesis_for(
        cluster,
        Planned(0, at_s=1, kind="kill", target="broker:1", duration_s=1),
        Planned(1, at_s=2, kind="pause", target="broker:2", duration_s=1),
    )
    play(cluster, nemesis, until=60)
    errors = [f for k, f in kinds(cluster) if k == "fault.error"]
    assert errors == [
        {
            "index": 0,
            "fault": "kill",
            "error": "fault #0 kill inject: docker said no",
            "optional": False,
        }
    ]
    assert [(t, op) for t, op, _ in cluster.ops() if op != "kill"] == [(2, "pause"), (3, "unpause")]
    assert len(cluster.faults) == 0  # the failed kill was never booked, so nothing to heal


def test_a_heal_that_raises_is_a_fault_error_and_the_fault_stays_booked() -> None:
    cluster = FakeCluster()
    cluster.node(2).fail["unpause"] = RuntimeError("stuck")
    nemesis, _ = nemesis_for(
        cluster, Planned(0, at_s=1, kind="pause", target="broker:2", duration_s=1)
    )
    play(cluster, nemesis, until=60)
    assert [f["error"] for k, f in kinds(cluster) if k == "fault.error"] == [
        "fault #0 pause heal: stuck"
    ]
    assert len(cluster.faults) == 1  # heal_all tries again in the heal phase


def test_consumer_crash_crashes_then_restarts_the_member() -> None:
    cluster = FakeCluster()
    nemesis, consumers = nemesis_for(
        cluster,
        Planned(0, at_s=2, kind="consumer-crash", target="consumer:group/1", duration_s=3),
        Planned(1, at_s=4, kind="consumer-crash", target="consumer:spark/0"),
    )
    play(cluster, nemesis, until=60)
    assert consumers.log == [
        (2, "crash", "group-1"),
        (4, "crash", "spark-0"),
        (5, "restart", "group-1"),
    ]
    nemesis.restart_crashed()  # heal phase: the one without a duration comes back
    assert consumers.log[-1] == (60, "restart", "spark-0")
    nemesis.restart_crashed()
    assert len(consumers.log) == 4  # restarted once only
    assert cluster.ops() == []


def test_stop_ends_the_play_before_pending_faults() -> None:
    cluster = FakeCluster()
    nemesis, _ = nemesis_for(
        cluster,
        Planned(0, at_s=1, kind="kill", target="broker:1", duration_s=10),
        Planned(1, at_s=20, kind="kill", target="broker:2"),
    )
    play(cluster, nemesis, until=5)
    nemesis.stop()
    nemesis.join(5)
    assert nemesis.done
    assert cluster.ops() == [(1, "kill", "broker-1")]  # its heal is the heal phase's job now
    skipped = [f for k, f in kinds(cluster) if k == "fault.skipped"]
    assert [(f["index"], f["optional"]) for f in skipped] == [(1, False)]  # it never fired
    assert "stopped before" in skipped[0]["reason"]


def test_random_targets_are_seeded() -> None:
    def victims(seed: int) -> list[str]:
        cluster = FakeCluster(brokers_n=5)
        plan = [Planned(i, at_s=i, kind="pause", target="random", duration_s=0.5) for i in range(6)]
        consumers = FakeConsumers(cluster.clock)
        nemesis = Nemesis(cluster, plan, consumers, cluster.history, seed, "g", clock=cluster.clock)
        play(cluster, nemesis, until=60)
        return [n for _, op, n in sorted(cluster.ops()) if op == "pause"]

    assert victims(7) == victims(7)
    assert len({tuple(victims(s)) for s in range(5)}) > 1


class OverflowingClock:
    """The fake clock, waiting as threading.Event does: a wait past TIMEOUT_MAX raises."""

    def __init__(self, clock: object) -> None:
        self.clock = clock

    def monotonic(self) -> float:
        return self.clock.monotonic()  # type: ignore[attr-defined, no-any-return]

    def wait(self, event: threading.Event, seconds: float) -> bool:
        if seconds > threading.TIMEOUT_MAX:
            raise OverflowError("timeout value is too large")
        return self.clock.wait(event, seconds)  # type: ignore[attr-defined, no-any-return]


def test_a_fault_thread_that_dies_records_a_fault_error() -> None:
    """at_s 1e12 made the thread raise OverflowError and vanish without an event; the faults
    check then had nothing to say. Now it is a fault.error naming the fault."""
    cluster = FakeCluster()
    consumers = FakeConsumers(cluster.clock)
    plan = [
        Planned(0, at_s=1e12, kind="kill", target="broker:1"),
        Planned(1, at_s=1, kind="pause", target="broker:2", duration_s=1e12),
    ]
    clock = OverflowingClock(cluster.clock)
    nemesis = Nemesis(cluster, plan, consumers, cluster.history, 1, "g", clock=clock)
    play(cluster, nemesis, until=5)
    errors = {f["index"]: str(f["error"]) for k, f in kinds(cluster) if k == "fault.error"}
    assert set(errors) == {0, 1}
    assert "fault #0 kill: the nemesis thread died: OverflowError" in errors[0]
    assert "fault #1 pause: the nemesis thread died: OverflowError" in errors[1]
    assert nemesis.done
