"""Pause: freeze every process of the node (cgroup freezer, like SIGSTOP); nothing is closed."""

from __future__ import annotations

from typing import Any, ClassVar

from harness.faults.base import Fault, NodeFault
from harness.faults.control import ChaosTarget, NodeRef
from harness.faults.drawing import Drawing
from harness.faults.kind import FaultKind, required


class PauseFault(NodeFault):
    kind = "pause"
    captures_on_heal = True
    found_at_heal: str | None = None  # the container's state when it was not paused then

    def _inject(self) -> None:
        self.node.pause()

    def _heal(self) -> None:
        """Thaw the node, unless another fault on it ended the pause already: a kill of the
        paused node (a role such as `controller` or `leader-of:` resolves to it when it
        fires) leaves it exited or restarted, and Docker refuses to unpause it. The pause
        did happen; the heal records the state it found (`found_at_heal`) instead."""
        state = self.node.status()
        if state != "paused":
            self.found_at_heal = state
            return
        self.node.unpause()

    def describe(self) -> dict[str, Any]:
        found = {"found_at_heal": self.found_at_heal} if self.found_at_heal else {}
        return {**super().describe(), **found}


class Pause(FaultKind):
    """`{kind: pause, target: ...}`: frozen at at_s, thawed at heal."""

    name: ClassVar[str] = "pause"
    drawing: ClassVar[Drawing | None] = Drawing()
    zookeeper_target: ClassVar[bool] = True

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> Fault:
        return PauseFault(cluster, required(target))
