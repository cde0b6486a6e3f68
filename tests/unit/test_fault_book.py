"""The book of active faults (harness.faults.control.ActiveFaults) holds a fault from the
moment it begins to act: the admin views trust no node a fault is still stopping."""

from __future__ import annotations

import threading

import pytest

from harness.faults.stop import StopFault
from tests.unit.fakes import FakeCluster


def test_a_node_being_stopped_is_touched_before_the_stop_returns() -> None:
    cluster = FakeCluster()
    node = cluster.node(2)
    node.hold["stop"] = threading.Event()
    fault = StopFault(cluster, 2)  # type: ignore[arg-type]
    injecting = threading.Thread(target=fault.inject)
    injecting.start()
    assert node.inside.wait(5), "the stop never began"
    # Mid-stop (a controlled shutdown takes seconds): no longer a node to ask.
    assert cluster.faults.touched() == {"broker-2"}
    assert not fault.active
    node.hold["stop"].set()
    injecting.join(5)
    assert fault.active and cluster.faults.touched() == {"broker-2"}
    fault.heal()
    assert cluster.faults.touched() == set()


def test_a_stop_that_fails_leaves_nothing_booked() -> None:
    cluster = FakeCluster()
    cluster.node(3).fail["stop"] = RuntimeError("docker said no")
    fault = StopFault(cluster, 3)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="docker said no"):
        fault.inject()
    assert not fault.active
    assert cluster.faults.touched() == set() and len(cluster.faults) == 0
