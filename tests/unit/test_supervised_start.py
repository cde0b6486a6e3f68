"""start_supervised: a node that exits before logging start-up is started again, like a
supervisor would, also right after an upgrade or a migration roll started its new container."""

from __future__ import annotations

import pytest

from harness.errors import ClusterStartError
from harness.nodes import supervised_start
from harness.nodes.supervised_start import NodeRefusedStart, start_supervised
from harness.results.history import History


class ExitsEarly:
    """A node whose first `exits` start-ups end before the start-up line (NodeExistsException)."""

    def __init__(self, exits: int, silent: bool = False) -> None:
        self.name = "broker-1"
        self.exits, self.silent = exits, silent
        self.starts = 0
        self.running = False

    def start(self) -> None:
        self.starts += 1
        self.running = True

    def wait_started(self, timeout_s: float) -> None:
        if self.silent:
            raise ClusterStartError("broker-1: no start-up line in time")
        if self.exits:
            self.exits -= 1
            self.running = False
            raise ClusterStartError("broker-1: container is exited before it logged start-up")

    def is_up(self) -> bool:
        return self.running


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(supervised_start, "RESTART_BACKOFF_S", 0.01)


def _failures(history: History) -> list[str]:
    return [e.fields["error"] for e in history.events if e.kind == "node.start_failed"]


def test_a_container_just_started_is_awaited_then_started_again_while_it_exits() -> None:
    node, history = ExitsEarly(exits=2), History()
    start_supervised(node, history, timeout_s=30, started=True)
    assert node.starts == 2  # not the first time: replace() had started the new container
    assert _failures(history) == ["broker-1: container is exited before it logged start-up"] * 2


def test_a_stopped_node_is_started_first() -> None:
    node, history = ExitsEarly(exits=1), History()
    start_supervised(node, history, timeout_s=30)
    assert node.starts == 2 and len(_failures(history)) == 1


def test_a_running_silent_node_is_not_started_again() -> None:
    node, history = ExitsEarly(exits=0, silent=True), History()
    with pytest.raises(ClusterStartError, match="no start-up line"):
        start_supervised(node, history, timeout_s=30)
    assert node.starts == 1 and _failures(history) == []


def test_a_node_that_keeps_exiting_fails_at_the_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(supervised_start, "MAX_EARLY_EXITS", 10**6)  # the timeout comes first
    node, history = ExitsEarly(exits=10**6), History()
    with pytest.raises(ClusterStartError, match="restarted while it exits early"):
        start_supervised(node, history, timeout_s=0.2)
    assert node.starts >= 1


def test_a_node_that_exits_early_again_and_again_is_one_kafka_refuses_to_start() -> None:
    node, history = ExitsEarly(exits=10**6), History()
    with pytest.raises(NodeRefusedStart, match="8 times in a row; the last: broker-1: container"):
        start_supervised(node, history, timeout_s=30)
    assert node.starts == supervised_start.MAX_EARLY_EXITS == 8
    assert len(_failures(history)) == 7  # the eighth exit is the refusal's, not a retry's


def test_seven_early_exits_then_a_start_is_a_start() -> None:
    node, history = ExitsEarly(exits=7), History()
    start_supervised(node, history, timeout_s=30)
    assert node.starts == 8 and node.is_up()
