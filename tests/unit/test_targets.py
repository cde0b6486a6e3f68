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
    view = FakeCluster(leaders={("t", 1): 3}, coordinators={"g": 2}, controller_id=2)
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
    view = FakeCluster(leaders={("t", 0): None}, coordinators={"g": None})
    with pytest.raises(error, match=message):
        Target.parse(text).resolve(view, random.Random(1))
