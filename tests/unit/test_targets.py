"""Fault targets: their syntax, and their resolution against a fake cluster view."""

from __future__ import annotations

import random

import pytest

from harness import ConfigError, FaultError, Target
from tests.unit.fakes import FakeCluster


def test_parse_every_kind() -> None:
    assert Target.parse("broker:2") == Target("broker", broker=2)
    assert Target.parse("controller").kind == "controller"
    assert Target.parse("leader-of:orders.v1/3") == Target(
        "leader-of", topic="orders.v1", partition=3
    )
    assert Target.parse("coordinator-of:group-a") == Target("coordinator-of", group="group-a")
    assert Target.parse("random").kind == "random"
    assert Target.parse("zookeeper").kind == "zookeeper"


@pytest.mark.parametrize(
    "text", ["broker:", "leader-of:t", "leader-of:t/x", "leader", "broker:one"]
)
def test_bad_target_names_the_syntax(text: str) -> None:
    with pytest.raises(ConfigError, match="expected broker:<id>"):
        Target.parse(text)


def test_resolve_names_a_node_at_the_time_asked() -> None:
    view = FakeCluster(leaders_of={("t", 1): 3}, coordinators={"g": 2}, controller_id=2)
    rng = random.Random(1)
    assert Target.parse("broker:3").resolve(view, rng) == 3
    assert Target.parse("leader-of:t/1").resolve(view, rng) == 3
    assert Target.parse("coordinator-of:g").resolve(view, rng) == 2
    assert Target.parse("controller").resolve(view, rng) == 2
    assert Target.parse("zookeeper").resolve(FakeCluster(mode="zookeeper"), rng) == "zookeeper"


def test_random_picks_among_running_brokers_only() -> None:
    view = FakeCluster(brokers_n=5)
    for i in (1, 2, 4):
        view.node(i).state = "exited"
    rng = random.Random(3)
    assert {Target.parse("random").resolve(view, rng) for _ in range(50)} == {3, 5}


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        ("broker:7", ConfigError, "no node 7"),
        ("leader-of:t/0", FaultError, "t/0 has no leader to target"),
        ("coordinator-of:g", FaultError, "group 'g' has no coordinator"),
        ("zookeeper", ConfigError, "needs mode='zookeeper'"),
    ],
)
def test_unresolvable_targets_say_why(text: str, error: type[Exception], message: str) -> None:
    view = FakeCluster(leaders_of={("t", 0): None}, coordinators={"g": None})
    with pytest.raises(error, match=message):
        Target.parse(text).resolve(view, random.Random(1))


def test_except_leaves_out_what_the_other_target_names_now() -> None:
    leaders = {("chaos", p): 1 + p % 3 for p in range(6)}  # brokers 1, 2, 3 lead two each
    view = FakeCluster(leaders_of=leaders, coordinators={"g": 2})
    target = Target.parse("leader-of:chaos/* except coordinator-of:g")
    assert target.excluded == (Target("coordinator-of", group="g"),)
    picked = {target.resolve(view, random.Random(seed)) for seed in range(40)}
    assert picked == {1, 3}  # never the coordinator's broker, both others over the seeds


def test_except_that_leaves_nothing_skips_the_fault_with_the_reason() -> None:
    view = FakeCluster(leaders_of={("chaos", 0): 2}, coordinators={"g": 2})
    with pytest.raises(FaultError, match=r"leader-of:chaos/0 names broker 2, which 'except'"):
        Target.parse("leader-of:chaos/0 except coordinator-of:g").resolve(view, random.Random(1))


def test_an_except_target_that_names_nothing_excludes_nothing() -> None:
    view = FakeCluster(leaders_of={("chaos", 0): 2}, coordinators={"g": None})
    target = Target.parse("leader-of:chaos/0 except coordinator-of:g, controller")
    view.controller_id = 1
    assert target.resolve(view, random.Random(1)) == 2


def test_random_except_several() -> None:
    view = FakeCluster(brokers_n=4, leaders_of={("t", 0): 4}, controller_id=1)
    target = Target.parse("random except controller, leader-of:t/0")
    assert {target.resolve(view, random.Random(s)) for s in range(30)} == {2, 3}


@pytest.mark.parametrize("text", ["random except random", "broker:1 except zookeeper"])
def test_except_takes_brokers_only(text: str) -> None:
    with pytest.raises(ConfigError, match="'except' takes brokers"):
        Target.parse(text)


def _cell_errors(target: str) -> str:
    import yaml

    from harness.spec import SpecError, expand_cells, parse_spec

    text = f"name: t\nproducer: {{records: 1}}\nfaults: [{{at_s: 1, kind: kill, target: '{target}'}}]\n"
    try:
        [cell] = expand_cells(parse_spec(yaml.safe_load(text), "t.yaml"), "t.yaml")
    except SpecError as err:
        return "\n".join(err.lines)
    from harness.nemesis.schedule import plan_faults

    return plan_faults(cell, 1)[0].target


def test_spec_targets_with_except() -> None:
    assert (
        _cell_errors("leader-of:chaos/* except coordinator-of")
        == "leader-of:chaos/* except coordinator-of:chaos-group"
    )
    assert "faults[0].target: except: no node 9" in _cell_errors("random except broker:9")
    assert "expected the spec's topic 'chaos'" in _cell_errors(
        "leader-of:other/* except controller"
    )


def test_any_leader_is_a_running_broker() -> None:
    view = FakeCluster(leaders_of={("chaos", 0): 1, ("chaos", 1): 2, ("chaos", 2): 3})
    view.node(2).state = "exited"  # killed, and still named leader of chaos/1 until fenced
    picked = {Target.parse("leader-of:chaos/*").resolve(view, random.Random(s)) for s in range(30)}
    assert picked == {1, 3}
    for i in (1, 3):
        view.node(i).state = "exited"
    with pytest.raises(FaultError, match="no running broker leads a partition of chaos"):
        Target.parse("leader-of:chaos/*").resolve(view, random.Random(1))
