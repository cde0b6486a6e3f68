"""Graceful stop: SIGTERM, the broker shuts down cleanly (controlled shutdown)."""

from __future__ import annotations

from typing import ClassVar

from harness.faults.base import Fault, NodeFault
from harness.faults.control import ChaosTarget, NodeRef
from harness.faults.drawing import Drawing
from harness.faults.kind import FaultKind, required


class StopFault(NodeFault):
    kind = "stop"
    captures_on_heal = True

    def _inject(self) -> None:
        self.node.stop()

    def _heal(self) -> None:
        self._bring_back()


class Stop(FaultKind):
    """`{kind: stop, target: ...}`: stopped at at_s, started again at heal."""

    name: ClassVar[str] = "stop"
    drawing: ClassVar[Drawing | None] = Drawing()
    zookeeper_target: ClassVar[bool] = True

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> Fault:
        return StopFault(cluster, required(target))
