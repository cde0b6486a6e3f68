"""Fault target syntax (resolution needs a cluster and is covered by integration tests)."""

from __future__ import annotations

import pytest

from harness import ConfigError, Target


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
