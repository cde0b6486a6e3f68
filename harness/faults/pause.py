"""Pause: freeze every process of the node (cgroup freezer, like SIGSTOP); nothing is closed."""

from __future__ import annotations

from typing import ClassVar

from harness.faults.base import Fault, NodeFault
from harness.faults.control import ChaosTarget, NodeRef
from harness.faults.kind import FaultKind, required


class PauseFault(NodeFault):
    kind = "pause"
    captures_on_heal = True

    def _inject(self) -> None:
        self.node.pause()

    def _heal(self) -> None:
        self.node.unpause()


class Pause(FaultKind):
    """`{kind: pause, target: ...}`: frozen at at_s, thawed at heal."""

    name: ClassVar[str] = "pause"
    zookeeper_target: ClassVar[bool] = True

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> Fault:
        return PauseFault(cluster, required(target))
